package main

// End-to-end tests of the command line's guardrails: a command that finds
// no Latchkey data refuses to run and creates nothing, and every command's
// -h prints its usage.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// newDataDir returns a new data directory holding Latchkey data, as
// "project create" leaves it (with the projects default and setup).
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "setup")
	return dir
}

// commandNames returns the commands usageText lists ("serve", "key
// create", ...).
func commandNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(usageText), "\n")[1:] {
		f := strings.Fields(line)
		require.Equal(t, "server", f[0], line)
		if f[1] == "[serve]" {
			names = append(names, "serve")
			continue
		}
		names = append(names, f[1]+" "+f[2])
	}
	require.Greater(t, len(names), 10)
	return names
}

// runIn runs the command line in the working directory cwd, with stdin
// and the extra environment env, and returns its exit status and output.
func runIn(t *testing.T, cwd, stdin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBin, args...)
	cmd.Dir = cwd
	cmd.Env = childEnv(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// requireEmpty fails unless dir holds nothing.
func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Empty(t, names, "nothing created in %s", dir)
}

// needsData gives, for every command but serve and project create, a
// command line that would succeed on data holding project default, and
// its stdin.
var needsData = map[string]struct {
	stdin string
	args  []string
}{
	"user create":        {"a-long-password\n", []string{"-project", "default", "-email", "ada@example.com"}},
	"user set-password":  {"a-long-password\n", []string{"-project", "default", "-email", "ada@example.com"}},
	"user disable":       {"", []string{"-project", "default", "-email", "ada@example.com"}},
	"user enable":        {"", []string{"-project", "default", "-email", "ada@example.com"}},
	"user list":          {"", []string{"-project", "default"}},
	"contact create":     {"", []string{"-project", "default", "-name", "n"}},
	"contact seed":       {"", []string{"-project", "default", "-n", "1"}},
	"key create":         {"", []string{"-project", "default", "-name", "k"}},
	"key list":           {"", []string{"-project", "default"}},
	"key revoke":         {"", []string{"-project", "default", "key_x"}},
	"key roll":           {"", []string{"-project", "default", "key_x"}},
	"key rotate-signing": {"", []string{"-project", "default"}},
	"signing-key list":   {"", []string{"-project", "default"}},
	"audit list":         {"", []string{"-project", "default"}},
}

// TestE2E_noDataNoCommand runs every command but serve and project create
// where there is no Latchkey data: in a directory without latchkey-data,
// with a -data directory that does not exist, with an empty one, and with
// LATCHKEY_MASTER_KEY set. Each fails, says where it looked, and creates
// nothing; serve and project create still create what they need.
func TestE2E_noDataNoCommand(t *testing.T) {
	t.Parallel()
	key := []string{masterKeyEnv + "=" + strings.Repeat("Ab", 21) + "A="}
	for _, name := range commandNames(t) {
		if createsData(name) {
			continue
		}
		c, listed := needsData[name]
		require.True(t, listed, "command %q: add it to needsData", name)
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			args := append(strings.Fields(name), c.args...)
			code, stdout, stderr := runIn(t, cwd, c.stdin, nil, args...)
			assert.Equal(t, 1, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "no Latchkey data")
			assert.Contains(t, stderr, filepath.Join(cwd, "latchkey-data", "latchkey.db"), "says where it looked")
			requireEmpty(t, cwd)

			missing := filepath.Join(cwd, "nope")
			code, _, stderr = runIn(t, cwd, c.stdin, key, insertFlags(args, "-data", missing)...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, filepath.Join(missing, "latchkey.db"))
			requireEmpty(t, cwd)

			empty := t.TempDir()
			code, _, stderr = runIn(t, cwd, c.stdin, nil, insertFlags(args, "-data", empty)...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, filepath.Join(empty, "latchkey.db"))
			requireEmpty(t, empty)
		})
	}

	t.Run("project create and serve create", func(t *testing.T) {
		cwd := t.TempDir()
		code, _, stderr := runIn(t, cwd, "", nil, "project", "create", "acme")
		require.Equal(t, 0, code, stderr)
		for _, f := range []string{"latchkey.db", "master.key"} {
			_, err := os.Stat(filepath.Join(cwd, "latchkey-data", f))
			assert.NoError(t, err, f)
		}
		code, _, stderr = runIn(t, cwd, "", nil, "key", "list", "-project", "acme")
		assert.Equal(t, 0, code, stderr)

		dir := filepath.Join(t.TempDir(), "served")
		startServer(t, dir)
		ok(t, dir, "", "key list", "-project", "default")
	})
}

// TestE2E_noDataNoCommandPostgres points a command at a PostgreSQL database
// without Latchkey's schema: it fails, names the database but not its
// password, and creates no table.
func TestE2E_noDataNoCommandPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	withPassword := strings.Replace(db, "postgres://postgres@", "postgres://postgres:hunter2-db-secret@", 1)
	dir := t.TempDir()
	for _, url := range []string{db, withPassword} {
		res := cli(t, dir, "", "key list", "-db", url, "-project", "default")
		assert.Equal(t, 1, res.code, res.stderr)
		assert.Contains(t, res.stderr, "no Latchkey data in the PostgreSQL database")
		assert.Contains(t, res.stderr, "no projects table")
		assert.NotContains(t, res.stderr, "hunter2-db-secret")
	}
	requireEmpty(t, dir)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var tables int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables))
	assert.Zero(t, tables, "no schema was created")

	ok(t, dir, "", "project create", "-db", db, "acme")
	ok(t, dir, "", "key list", "-db", db, "-project", "acme")
}

// TestE2E_noDataNoCommandMySQL points a command at a MySQL database
// without Latchkey's schema: it fails, names the database, and creates no
// table.
func TestE2E_noDataNoCommandMySQL(t *testing.T) {
	t.Parallel()
	db := mytest.NewDatabase(t)
	dir := t.TempDir()
	res := cli(t, dir, "", "key list", "-db", db, "-project", "default")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, res.stderr, "no Latchkey data in the MySQL database")
	assert.Contains(t, res.stderr, "no projects table")
	requireEmpty(t, dir)
	st, err := mysql.Open(context.Background(), db, &mysql.Options{NoMigrate: true})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.ListProjects(context.Background())
	require.Error(t, err, "no schema was created")

	ok(t, dir, "", "project create", "-db", db, "acme")
	ok(t, dir, "", "key list", "-db", db, "-project", "acme")
}

// TestE2E_help checks that -h prints every command's usage and flags, with
// their defaults, on stderr, and creates nothing.
func TestE2E_help(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	for _, name := range commandNames(t) {
		for _, h := range []string{"-h", "-help"} {
			code, stdout, stderr := runIn(t, cwd, "", nil, append(strings.Fields(name), h)...)
			assert.Equal(t, 0, code, "%s %s: %s", name, h, stderr)
			assert.Empty(t, stdout, name)
			line := "server " + name + " "
			if name == "serve" {
				line = "server [serve] "
			}
			assert.True(t, strings.HasPrefix(stderr, "usage:\n  "+line), "%s %s:\n%s", name, h, stderr)
			assert.Contains(t, stderr, "\nflags:\n", name)
			assert.Contains(t, stderr, "  -data string\n    \tdirectory of the SQLite database and master.key (default ./latchkey-data)\n", name)
			assert.Contains(t, stderr, "  -db string\n", name)
			assert.NotContains(t, stderr, "login-address-limit", "the benchmark's flag is not advertised")
		}
	}
	code, _, stderr := runIn(t, cwd, "", nil, "serve", "-h")
	require.Equal(t, 0, code)
	assert.Contains(t, stderr, "  -addr string\n    \taddress to listen on (default 127.0.0.1:8080)\n")
	code, _, stderr = runIn(t, cwd, "", nil, "-h")
	require.Equal(t, 0, code)
	assert.Equal(t, usageText, stderr)
	requireEmpty(t, cwd)
}

// TestE2E_commandGroups checks the first word of a two-word command given
// alone, with -h, or with a word that is no command of it: the group's
// commands are listed (on -h with exit status 0, else 2 after a message
// naming the group), and nothing is created.
func TestE2E_commandGroups(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	groups := map[string][]string{}
	for _, name := range commandNames(t) {
		if group, _, ok := strings.Cut(name, " "); ok {
			groups[group] = append(groups[group], name)
		}
	}
	require.Contains(t, groups, "key")
	for group, names := range groups {
		var usage strings.Builder
		usage.WriteString("usage:\n")
		for _, name := range names {
			for _, line := range strings.Split(usageText, "\n") {
				if strings.HasPrefix(line, "  server "+name+" ") {
					usage.WriteString(line + "\n")
				}
			}
		}
		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{group}, 2, "latchkey: " + group + ": needs a command\n"},
			{[]string{group, "-project", "default"}, 2, "latchkey: " + group + ": needs a command\n"},
			{[]string{group, "frobnicate"}, 2, "latchkey: " + group + ": unknown command \"frobnicate\"\n"},
			{[]string{group, "-h"}, 0, ""},
		} {
			code, stdout, stderr := runIn(t, cwd, "", nil, tc.args...)
			assert.Equal(t, tc.code, code, "%q: %s", tc.args, stderr)
			assert.Empty(t, stdout, "%q", tc.args)
			assert.Equal(t, tc.msg+usage.String(), stderr, "%q", tc.args)
		}
	}
	requireEmpty(t, cwd)
}
