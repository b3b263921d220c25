package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"iter"
	"maps"
	"mime"
	"net/http"
	"path"
	"time"
)

// ContentSecurityPolicy is sent with every console response: only the
// console's own stylesheet, script and images; no inline script or style;
// forms posting only to the console's origin; no framing.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// withSecurityHeaders sets the headers every console response carries,
// before next writes anything.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

//go:embed static
var staticFS embed.FS

// staticFiles are the stylesheet, script and icon, read once.
type staticFiles struct {
	files map[string]staticFile
}

type staticFile struct {
	body        []byte
	contentType string
	etag        string
}

func loadStatic() *staticFiles {
	entries, err := staticFS.ReadDir("static")
	if err != nil {
		panic("console: embedded static files: " + err.Error()) // unreachable: embedded at build time
	}
	s := &staticFiles{files: make(map[string]staticFile)}
	for _, e := range entries {
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic("console: embedded static files: " + err.Error()) // unreachable
		}
		sum := sha256.Sum256(b)
		// The console's own kinds are named here: asking package mime
		// would read the system's type tables, at the start of every
		// process that builds a console (every CLI command).
		var ct string
		switch ext := path.Ext(e.Name()); ext {
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		default:
			ct = mime.TypeByExtension(ext)
		}
		s.files[e.Name()] = staticFile{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	}
	return s
}

// names returns the names of the files.
func (s *staticFiles) names() iter.Seq[string] { return maps.Keys(s.files) }

// handler returns the handler of static/name, one of names, for GET and
// HEAD. Files are revalidated by ETag on every use (no-cache), so a new
// release is picked up at once.
func (s *staticFiles) handler(name string) http.Handler {
	f := s.files[name]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Type", f.contentType)
		hd.Set("ETag", f.etag)
		hd.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}
