package latchkey

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// httpMethods are the members of an OpenAPI path item that are operations.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// routingTable returns a Latchkey on an empty SQLite store, with the
// console, and its routing table.
func routingTable(t *testing.T) (*Latchkey, []route) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	masterKey := []byte("0123456789abcdef0123456789abcdef")
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	l, err := New(st, masterKey, &Options{Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	hasher := identity.NewHasher(nil)
	ident := identity.NewHandler(identity.Deps{
		Sessions: st, Minter: l.keyring, MasterKey: masterKey,
		Authenticator: identity.NewAuthenticator(st, hasher, identity.NewMemoryLimiter(nil), nil),
	}, nil)
	return l, l.routes(parts{identity: ident})
}

// documented returns, from the OpenAPI document, the methods of each path
// (upper case, sorted) and the paths it declares out of scope.
func documented(t *testing.T) (paths map[string][]string, outOfScope []string) {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		OutOfScope []string                              `json:"x-latchkey-out-of-scope"`
	}
	require.NoError(t, json.Unmarshal(openapi.Document(), &doc))
	paths = map[string][]string{}
	for p, item := range doc.Paths {
		for m := range item {
			if slices.Contains(httpMethods, m) {
				paths[p] = append(paths[p], strings.ToUpper(m))
			}
		}
		slices.Sort(paths[p])
	}
	return paths, doc.OutOfScope
}

// The OpenAPI document names every path and method of the routing table and
// nothing else; the console's routes (its directory, and the directory
// without its slash) are exactly the paths the document declares out of
// scope.
func TestRoutingTable_matchesTheOpenAPIDocument(t *testing.T) {
	l, table := routingTable(t)
	served := map[string][]string{}  // path -> methods, as the 405 answers' Allow lists them
	consoleDirs := map[string]bool{} // the console's directory, and the path without its slash
	for _, r := range table {
		method, path, ok := strings.Cut(r.pattern, " ")
		if !ok {
			method, path = "", r.pattern
		}
		if path == strings.TrimSuffix(PathConsole, "/") || strings.HasPrefix(path, PathConsole) {
			consoleDirs[min(path, PathConsole)] = true
			continue
		}
		require.True(t, ok, "a route of the API without a method: %s", r.pattern)
		served[path] = append(served[path], method)
		if method == "GET" {
			served[path] = append(served[path], "HEAD")
		}
	}
	for p := range served {
		slices.Sort(served[p])
		require.Equal(t, strings.Join(served[p], ", "), l.allow[p], "the table and its Allow headers disagree on %s", p)
	}

	docPaths, outOfScope := documented(t)
	for _, p := range slices.Sorted(maps.Keys(served)) {
		require.Contains(t, docPaths, p, "the routing table serves %s, which the OpenAPI document does not name", p)
		require.Equal(t, served[p], docPaths[p], "the methods of %s: routing table, then document", p)
	}
	for _, p := range slices.Sorted(maps.Keys(docPaths)) {
		require.Contains(t, served, p, "the OpenAPI document names %s, which the routing table does not serve", p)
	}
	slices.Sort(outOfScope)
	require.Equal(t, slices.Sorted(maps.Keys(consoleDirs)), outOfScope, "the console's paths must be the document's out-of-scope paths")
}

// The paths the OpenAPI document says answer browser pages of the listed
// origins (x-latchkey-cors) are those Latchkey answers so.
func TestCORSPrefix_matchesTheOpenAPIDocument(t *testing.T) {
	var doc struct {
		CORS struct {
			Paths string `json:"paths"`
		} `json:"x-latchkey-cors"`
	}
	require.NoError(t, json.Unmarshal(openapi.Document(), &doc))
	require.Equal(t, corsPrefix, doc.CORS.Paths)
}
