package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/store"
)

// Demo data.
const (
	demoEmail    = "admin@example.com"
	demoContacts = 1000
)

// consoleOffers names what the web console offers, as the demo's banner
// lists it.
const consoleOffers = "API keys, Signing keys, Users, Audit log"

// seedDemo seeds, once, the demo data in project default: 1,000 contacts and
// the admin user demoEmail with a random password. The user is created last
// and marks the seeding as done, so a later -demo seeds nothing. It prints
// the credentials once, as JSON on stdout, and curl lines to try on stderr.
func seedDemo(ctx context.Context, env *env, inst *instance, sf *storeFlags, baseURL string) error {
	const project = store.DefaultProject
	ctx = audit.NewContext(ctx, audit.CLI)
	_, err := inst.st.GetUserByEmail(ctx, project, demoEmail)
	switch {
	case err == nil:
		where, _ := cliFlags(sf)
		if err := env.out.print(map[string]any{"event": "demo", "seeded": false, "project": project, "email": demoEmail}); err != nil {
			return err
		}
		fmt.Fprintf(env.stderr, "\nDemo data already present: user %s in project %s; its password was printed when it was created.\n"+
			"Lost it? Set a new one (at least 8 characters; it ends the user's sessions):\n"+
			"  echo 'NEW PASSWORD' | go run ./examples/server user set-password%s -project %s -email %s\n"+
			"The web console (%s): %s/console/\n"+
			"Set PASSWORD to it before pasting the lines below.\n\n%s\n", demoEmail, project, where, project, demoEmail, consoleOffers, baseURL, curlLines(baseURL, sf, `$PASSWORD`))
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("demo: %w", err)
	}
	if err := seedContacts(ctx, inst.st, time.Now, project, demoContacts); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	password := randomPassword()
	u, err := inst.lk.Users().Create(ctx, project, demoEmail, password, []string{"admin"})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := env.out.print(map[string]any{
		"event": "demo", "seeded": true, "project": project, "contacts": demoContacts,
		"user": map[string]any{"id": u.ID, "email": u.Email, "tags": u.Tags}, "password": password,
	}); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "\nDemo data seeded in project %s: %d contacts and the admin user\n\n    email:    %s\n    password: %s   (shown once)\n\nThe web console (%s): %s/console/ (sign in with the user above)\n\nTry the API (paste into a POSIX shell):\n\n%s\n",
		project, demoContacts, demoEmail, password, consoleOffers, baseURL, curlLines(baseURL, sf, password))
	return nil
}

// randomPassword returns 128 random bits as 22 URL-safe characters, which
// need no quoting in a shell or in JSON.
func randomPassword() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// cliFlags returns the flags a printed command line needs to reach the
// server's data (-data, -db), and a line to run before it when the -db URL
// holds a password (which is never printed).
func cliFlags(sf *storeFlags) (where, setup string) {
	if sf.data != defaultDataDir {
		// The master key is there, whatever the database.
		where = " -data " + shellQuote(sf.data)
	}
	switch {
	case sf.db != "" && dbURLHasPassword(sf.db):
		// The lines are printed: never the database's password.
		where += ` -db "$LATCHKEY_DB"`
		setup = "# set LATCHKEY_DB to the -db URL this server runs with\n    LATCHKEY_DB='" + dbScheme(sf.db) + "://...'\n    "
	case sf.db != "":
		where += " -db " + shellQuote(sf.db)
	}
	return where, setup
}

// curlLines returns shell lines that log in, list, page, refresh and use an
// API key against baseURL. password is pasted into the login line as it is
// (a literal password, or a shell variable reference).
func curlLines(baseURL string, sf *storeFlags, password string) string {
	where, setup := cliFlags(sf)
	cli := "go run ./examples/server key create" + where
	revoke := "go run ./examples/server key revoke" + where
	lines := []string{
		"B=" + baseURL,
		"# log in: a login token (24 h) and a refresh token",
		`LOGIN=$(curl -s -X POST "$B/v1/identity/login" -H 'Content-Type: application/json' -d '{"email":"` + demoEmail + `","password":"'"` + password + `"'"}'); echo "$LOGIN"`,
		`TOKEN=$(echo "$LOGIN" | sed -E 's/.*"access_token":"([^"]*)".*/\1/'); REFRESH=$(echo "$LOGIN" | sed -E 's/.*"refresh_token":"([^"]*)".*/\1/')`,
		"# list the first page, then the next one with its cursor",
		`PAGE=$(curl -s "$B/v1/contacts?limit=3" -H "Authorization: Bearer $TOKEN"); echo "$PAGE"`,
		`CURSOR=$(echo "$PAGE" | sed -E 's/.*"next_cursor":"([^"]*)".*/\1/'); curl -s "$B/v1/contacts?limit=3&cursor=$CURSOR" -H "Authorization: Bearer $TOKEN"`,
		"# renew the login token without the password",
		`curl -s -X POST "$B/v1/identity/refresh" -H 'Content-Type: application/json' -d '{"refresh_token":"'"$REFRESH"'"}'`,
		"# a permanent API key for a backend (the token is shown once), then revoke it",
		`KEY=$(` + cli + ` -project default -name demo); echo "$KEY"`,
		`APIKEY=$(echo "$KEY" | sed -E 's/.*"token":"([^"]*)".*/\1/'); curl -s "$B/v1/contacts?limit=2" -H "Authorization: Bearer $APIKEY"`,
		revoke + ` -project default $(echo "$KEY" | sed -E 's/.*"id":"([^"]*)".*/\1/')`,
		`curl -s "$B/v1/contacts?limit=2" -H "Authorization: Bearer $APIKEY"   # 401 invalid_token from now on`,
		"# end the session of the login above, on every server: its tokens are refused from now on",
		`curl -s -o /dev/null -w '%{http_code}\n' -X POST "$B/v1/identity/logout" -H 'Content-Type: application/json' -d '{"refresh_token":"'"$REFRESH"'"}'   # 204`,
		`curl -s "$B/v1/contacts?limit=1" -H "Authorization: Bearer $TOKEN"   # 401 invalid_token: the session ended`,
	}
	return "    " + setup + strings.Join(lines, "\n    ") + "\n"
}

// dbURLHasPassword reports whether the -db URL carries a password.
func dbURLHasPassword(db string) bool {
	u, err := url.Parse(db)
	if err != nil {
		return true // unknown: treat it as secret
	}
	_, has := u.User.Password()
	return has || u.Query().Has("password")
}

// dbScheme returns the scheme of the -db URL: postgres, postgresql or
// mysql.
func dbScheme(db string) string {
	scheme, _, _ := strings.Cut(db, "://")
	return scheme
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
