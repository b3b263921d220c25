// Package openapi holds Latchkey's wire contract as an OpenAPI 3.1 document
// (openapi.json, embedded) and serves it at {base_url}/openapi.json.
//
// The document describes every operation of the routing table (package
// latchkey) except the web console's HTML pages, which it lists as out of
// scope under the top-level member "x-latchkey-out-of-scope". What OpenAPI
// cannot say (cursor stability, ordering, refresh rotation, sessions,
// revocation guarantees, the iss rule, throttling, 503) is written in
// docs/contract.md. Tests route their HTTP traffic through
// internal/openapitest, which fails them on any request or response the
// document does not allow, so the document and the code cannot drift
// apart.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Path is where the document is served, relative to a project's base_url.
const Path = "/openapi.json"

// DefaultMaxAge is the max-age of the served document's Cache-Control.
const DefaultMaxAge = 5 * time.Minute

//go:embed openapi.json
var document []byte

// Document returns a copy of the embedded document as it is in the
// repository: its servers entry names the variable {base_url}, not a
// deployment's address.
func Document() []byte { return bytes.Clone(document) }

// Options tune the handler. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// MaxAge is how long the answer may be cached (Cache-Control: public,
	// max-age). Zero means DefaultMaxAge.
	MaxAge time.Duration
	// Logger receives the causes of 500 answers. Nil means slog.Default().
	Logger *slog.Logger
}

// NewHandler returns the handler of GET {base_url}/openapi.json: the
// document with its servers member replaced by the one base_url of the
// request's project (from tenant.FromContext). That base_url is
// issuer(project) when issuer is not nil and returns a non-empty string
// (a deployment's configured issuer, keys.Keyring.Issuer), else the address
// the request was sent to: its scheme (https under TLS), its Host and the
// path of the original request target less Path, as the discovery document
// computes it. The answer needs no token, is the same for every caller of
// one base_url, and may be cached for MaxAge; HEAD gets the headers only.
// Cross-origin reads are the routing table's business
// (httpapi.AllowAnyOrigin).
func NewHandler(issuer func(projectID string) string, opts *Options) http.Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	// The embedded document is fixed at build time and its tests parse it,
	// so failing to split it is a broken build, not a runtime condition.
	head, tail, err := splitServers(document)
	if err != nil {
		panic("openapi: the embedded document: " + err.Error())
	}
	cacheControl := "public, max-age=" + strconv.Itoa(int(o.MaxAge/time.Second))
	return httpapi.Handle(o.Logger, func(w http.ResponseWriter, r *http.Request) error {
		project, ok := tenant.FromContext(r.Context())
		if !ok {
			return errors.New("openapi: no project in the request context")
		}
		base := ""
		if issuer != nil {
			base = issuer(project)
		}
		if base == "" {
			base = httpapi.RequestBase(r, Path)
		}
		servers, err := json.Marshal([]struct {
			URL string `json:"url"`
		}{{URL: base}})
		if err != nil {
			return err
		}
		body := make([]byte, 0, len(head)+len(servers)+len(tail))
		body = append(append(append(body, head...), servers...), tail...)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("Cache-Control", cacheControl)
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
		return nil
	})
}

// splitServers returns doc, a JSON object, cut around the value of its
// top-level member "servers": what comes before the value and what comes
// after it, every other byte kept as it is. doc must hold that member once.
func splitServers(doc []byte) (head, tail []byte, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	start, end := -1, -1
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, nil, err
		}
		if key != "servers" {
			continue
		}
		if start >= 0 {
			return nil, nil, errors.New(`"servers" given twice`)
		}
		end = int(dec.InputOffset())
		start = end - len(value)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if start < 0 {
		return nil, nil, errors.New(`no "servers" member`)
	}
	return doc[:start], doc[end:], nil
}
