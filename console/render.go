package console

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

//go:embed templates
var templateFS embed.FS

// Page names: each is templates/<name>.html, rendered inside
// templates/layout.html.
const (
	pageSignin  = "signin"
	pageKeys    = "keys"
	pageCreated = "created"
	pageRevoke  = "revoke"
	pageRoll    = "roll"
	pageSigning = "signing"
	pageRetire  = "retire"
	pageRotate  = "rotate"
	pageUsers   = "users"
	pageUser    = "user"
	pagePasswd  = "password"
	pageDisable = "disable"
	pageAudit   = "audit"
	pageError   = "error"
)

// pages holds the parsed templates, one set per page.
type pages struct {
	t map[string]*template.Template
}

var templateFuncs = template.FuncMap{
	// day and clock format a time for people: "21 Nov 2026" and
	// "10:15 UTC".
	"day":   func(t time.Time) string { return t.UTC().Format("2 Jan 2006") },
	"clock": func(t time.Time) string { return t.UTC().Format("15:04 UTC") },
	// iso formats a time for the datetime attribute.
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	// microDay and microClock format a time to the microsecond, as the
	// audit log keeps it: "2026-11-21" and "10:15:30.123456".
	"microDay":   func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"microClock": func(t time.Time) string { return t.UTC().Format("15:04:05.000000") },
}

func parsePages() *pages {
	p := &pages{t: make(map[string]*template.Template)}
	for _, name := range []string{pageSignin, pageKeys, pageCreated, pageRevoke, pageRoll, pageSigning, pageRetire, pageRotate,
		pageUsers, pageUser, pagePasswd, pageDisable, pageAudit, pageError} {
		p.t[name] = template.Must(template.New("layout.html").Funcs(templateFuncs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// view is what every page template gets.
type view struct {
	// Title names the page in <title> and its heading.
	Title string
	// Project is the request's project.
	Project string
	// Email is the signed-in administrator's; "" on pages shown without a
	// session, which then have no navigation.
	Email string
	// FormToken is the session's form token, for the hidden field of
	// every form.
	FormToken string
	// Nav names the current section: "keys", "signing", "users" or
	// "audit".
	Nav string
	// Base leads from the current page back to the console's directory:
	// "" for every page the console links to.
	Base string
	// Flash is a one-time message from the previous request.
	Flash flash
	// Data is the page's own data.
	Data any
}

// render writes page with status. The page is rendered into a buffer
// first, so a template failure is a clean 500.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	v.Base = basePath(r)
	var buf bytes.Buffer
	if err := h.pages.t[page].Execute(&buf, v); err != nil {
		h.log.ErrorContext(r.Context(), "console: rendering a page", "page", page, "err", err)
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// basePath returns the relative path from the page of r to the console's
// directory: "" for /console/keys, "../" for /console/a/b.
func basePath(r *http.Request) string {
	rest, ok := strings.CutPrefix(r.URL.Path, "/console/")
	if !ok {
		return "console/"
	}
	return strings.Repeat("../", strings.Count(rest, "/"))
}

// page returns the view of a signed-in page, taking the session's flash
// message.
func (h *Handler) page(c *call, title, nav string, data any) view {
	return view{
		Title:     title,
		Project:   c.project,
		Email:     c.user.Email,
		FormToken: c.sess.formToken(),
		Nav:       nav,
		Flash:     h.takeFlash(c),
		Data:      data,
	}
}
