package latchkey

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docRoute matches a route of a list kept in a document: an optional
// method, then a path (its query, "?id=", left out).
var docRoute = regexp.MustCompile(`^(?:(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\s+)?(/[^\s?]*)`)

// docRoutes returns the routes listed in the file name: in a Go file, the
// indented lines of the doc comment that follow the line holding heading,
// up to a blank line; in a Markdown file, the first cells of the table that follows
// the heading line.
func docRoutes(t *testing.T, name, heading string) []string {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	var routes []string
	found, markdown := false, strings.HasSuffix(name, ".md")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !found {
			found = strings.Contains(line, heading)
			continue
		}
		var cell string
		switch {
		case markdown && strings.HasPrefix(line, "#"):
			return routes // the next section
		case markdown && strings.HasPrefix(line, "| `"):
			cell, _, _ = strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		case !markdown && (!strings.HasPrefix(line, "//") || line == "//" && len(routes) > 0):
			return routes // the end of the list
		case !markdown && strings.HasPrefix(line, "//\t"):
			cell = strings.TrimSpace(strings.TrimPrefix(line, "//\t"))
		default:
			continue
		}
		if m := docRoute.FindStringSubmatch(cell); m != nil {
			routes = append(routes, strings.TrimSpace(m[1]+" "+m[2]))
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, found, "%s has no %q", name, heading)
	return routes
}

// isConsole reports whether path is one of the console's.
func isConsole(path string) bool {
	return path == strings.TrimSuffix(PathConsole, "/") || strings.HasPrefix(path, PathConsole)
}

// The route lists kept in the documentation name every route of the
// routing table, once, and nothing else: the package documentation and the
// README list the API's routes and the console as one entry; the console's
// documentation lists its own (its static files as one entry). CORS
// preflights (OPTIONS) are described in prose, not listed.
func TestRoutingTable_matchesTheDocumentation(t *testing.T) {
	_, table := routingTable(t)
	var api, console []string
	for _, r := range table {
		method, path, ok := strings.Cut(r.pattern, " ")
		if !ok {
			method, path = "", r.pattern
		}
		switch {
		case method == "OPTIONS":
		case isConsole(path):
			path = strings.TrimSuffix(path, "{$}") // the directory alone
			if strings.HasPrefix(path, PathConsole+"static/") {
				path = PathConsole + "static/..."
			}
			console = append(console, strings.TrimSpace(method+" "+path))
		default:
			api = append(api, r.pattern)
		}
	}
	require.NotEmpty(t, console, "the table serves the console")
	api = append(api, PathConsole)
	slices.Sort(api)
	console = slices.Compact(slices.Sorted(slices.Values(console)))

	for _, doc := range []struct{ file, heading string }{
		{"doc.go", "the routing table of routes.go"},
		{"README.md", "### The routing table"},
	} {
		got := docRoutes(t, doc.file, doc.heading)
		slices.Sort(got)
		require.Equal(t, api, got, "the routes of the table, then those %s lists", doc.file)
	}
	got := docRoutes(t, "console/doc.go", "paths of that project's base_url")
	slices.Sort(got)
	require.Equal(t, console, got, "the console's routes of the table, then those console/doc.go lists")
}
