// Command server is Latchkey's example server and its command line.
//
// Run from the repository root:
//
//	go run ./examples/server -demo          # serve, with demo data, on 127.0.0.1:8080
//	go run ./examples/server project create acme
//	go run ./examples/server key create -project acme -name backend
//
// # Commands
//
//	serve (default) [-addr 127.0.0.1:8080] [-data DIR] [-db URL] [-public-url URL] [-cors-origin O]... [-metrics-addr ADDR] [-demo]
//	project create [-data DIR] [-db URL] NAME
//	user create    [-data DIR] [-db URL] -project P -email E [-tags a,b]   (password: first line of stdin)
//	user disable   [-data DIR] [-db URL] -project P -email E
//	user enable    [-data DIR] [-db URL] -project P -email E
//	user list      [-data DIR] [-db URL] -project P [-email-prefix S]
//	user set-password [-data DIR] [-db URL] -project P -email E   (password: first line of stdin; ends the user's sessions)
//	contact create [-data DIR] [-db URL] -project P -name N
//	contact seed   [-data DIR] [-db URL] -project P -n N
//	key create     [-data DIR] [-db URL] [-public-url URL] -project P -name N
//	key list       [-data DIR] [-db URL] -project P
//	key revoke     [-data DIR] [-db URL] -project P ID
//	audit list     [-data DIR] [-db URL] -project P [-limit N] [-cursor C] [-action A] [-target ID]
//
// Flags come before positional arguments. Every command prints JSON, one
// object per line, on stdout; errors go to stderr with exit status 1 (2 for
// a usage error). COMMAND -h prints the command's usage and flags, with
// their defaults, on stderr.
//
// Only serve and project create start a new deployment where -data or -db
// holds none; every other command then fails, saying where it looked, and
// creates nothing (no directory, master key or database).
//
// # Storage and master key
//
// -data DIR (default ./latchkey-data) holds the SQLite database latchkey.db
// and master.key. -db postgres://... uses PostgreSQL instead of SQLite, and
// -db mysql://user:pass@host:port/db MySQL 8.0+ or MariaDB 10.11+.
// The master key is LATCHKEY_MASTER_KEY (base64 of 32 bytes) if set, else
// DIR/master.key, created with mode 0600 on first use. Commands are safe to
// run while servers use the same store; what they change is served at once.
//
// # Serving
//
// The server serves project P at http://ADDR/p/P and the project default
// also at http://ADDR. Tokens carry iss = {public}/p/P (project P) or
// {public} (default), where {public} is -public-url, LATCHKEY_PUBLIC_URL, or
// for serve http://ADDR. serve records {public} in the store, and the
// one-shot commands that mint tokens (key create) use the recorded one when
// given none (without iss when no serve has recorded one). It prints {"event":"listening",...} on stdout when it
// accepts connections, logs one JSON line per request to stderr (never a
// token, a password or a query string), answers GET /healthz, and on SIGINT
// or SIGTERM finishes in-flight requests before closing the store.
//
// -cors-origin ORIGIN (repeatable; default: LATCHKEY_CORS_ORIGINS,
// comma-separated; none when unset) lets browser pages of that origin
// (scheme://host[:port]) call the /v1 API: latchkey.Options.CORSOrigins.
//
// -metrics-addr ADDR (default: LATCHKEY_METRICS_ADDR; empty: off) serves
// Latchkey's metrics and the Go runtime's in the Prometheus text format at
// http://ADDR/metrics, on a listener apart from the API's; serve then prints
// {"event":"metrics",...} on stdout before it listens.
//
// -login-address-limit N raises the number of failed sign-ins a client
// address may make per project in 15 minutes before it is answered 429
// (default 50; per-account throttling is unchanged). It exists so that
// examples/bench -flood can measure a login flood that throttling does not
// stop; do not raise it in production.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/latchkey-dev/latchkey/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks an error in the command line; it exits with status 2.
var errUsage = errors.New("usage")

// usageError is a mistake in the command line of command cmd ("" when no
// command was recognised). It matches errUsage.
type usageError struct {
	cmd, msg string
}

func (e *usageError) Error() string {
	if e.cmd == "" {
		return e.msg
	}
	return e.cmd + ": " + e.msg
}

func (e *usageError) Is(target error) bool { return target == errUsage }

// usagef returns a usageError of command cmd.
func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// invalidArg returns the usageError of an argument the store's checks (or a
// service's) refused, in their own words, when err is one; else err.
func invalidArg(cmd string, err error) error {
	var ae *store.ArgError
	if errors.As(err, &ae) {
		return usagef(cmd, "%s", ae.Reason)
	}
	return err
}

// usageOf returns the lines of usageText for command cmd, or all of them.
func usageOf(cmd string) string {
	if cmd == "" {
		return usageText
	}
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, line := range strings.Split(usageText, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "server "+cmd+" ") || cmd == "serve" && strings.HasPrefix(strings.TrimSpace(line), "server [serve]") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &env{stdin: stdin, out: newOutput(stdout), stderr: stderr, getenv: os.Getenv}
	err := dispatch(ctx, env, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		var help *helpRequest
		if errors.As(err, &help) {
			help.print(stderr)
		}
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "latchkey: %v\n", err)
		var ue *usageError
		cmd := ""
		if errors.As(err, &ue) {
			cmd = ue.cmd
		}
		fmt.Fprint(stderr, usageOf(cmd))
		return 2
	default:
		fmt.Fprintf(stderr, "latchkey: %v\n", err)
		return 1
	}
}

const usageText = `usage:
  server [serve] [-addr 127.0.0.1:8080] [-data DIR] [-db URL] [-public-url URL] [-cors-origin O]... [-metrics-addr ADDR] [-demo]
  server project create [-data DIR] [-db URL] [-alg EdDSA|ES256|RS256] NAME
  server user create    [-data DIR] [-db URL] -project P -email E [-tags a,b]   (password: first line of stdin)
  server user disable   [-data DIR] [-db URL] -project P -email E
  server user enable    [-data DIR] [-db URL] -project P -email E
  server user list      [-data DIR] [-db URL] -project P [-email-prefix S]
  server user set-password [-data DIR] [-db URL] -project P -email E   (password: first line of stdin; ends the user's sessions)
  server contact create [-data DIR] [-db URL] -project P -name N
  server contact seed   [-data DIR] [-db URL] -project P -n N
  server key create     [-data DIR] [-db URL] [-public-url URL] -project P -name N [-scope S]... [-expires-in D]
  server key roll       [-data DIR] [-db URL] [-public-url URL] -project P [-overlap D] ID
  server key list       [-data DIR] [-db URL] -project P
  server key revoke     [-data DIR] [-db URL] -project P ID
  server key rotate-signing [-data DIR] [-db URL] -project P [-alg EdDSA|ES256|RS256]
  server signing-key list   [-data DIR] [-db URL] -project P
  server audit list     [-data DIR] [-db URL] -project P [-limit N] [-cursor C] [-action A] [-target ID]
`

// command is one subcommand.
type command func(ctx context.Context, env *env, args []string) error

// lookup returns the command named name ("serve" or "group verb").
func lookup(name string) command {
	switch name {
	case "serve":
		return cmdServe
	case "project create":
		return cmdProjectCreate
	case "user create":
		return cmdUserCreate
	case "user disable":
		return cmdUserDisable
	case "user enable":
		return cmdUserEnable
	case "user set-password":
		return cmdUserSetPassword
	case "user list":
		return cmdUserList
	case "audit list":
		return cmdAuditList
	case "contact create":
		return cmdContactCreate
	case "contact seed":
		return cmdContactSeed
	case "key create":
		return cmdKeyCreate
	case "key roll":
		return cmdKeyRoll
	case "key list":
		return cmdKeyList
	case "key revoke":
		return cmdKeyRevoke
	case "key rotate-signing":
		return cmdKeyRotateSigning
	case "signing-key list":
		return cmdSigningKeyList
	}
	return nil
}

// dispatch picks the command named by args and runs it.
func dispatch(ctx context.Context, env *env, args []string) error {
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(env.stderr, usageText)
			return flag.ErrHelp
		}
		env.creates = createsData("serve")
		return cmdServe(ctx, env, args)
	}
	if args[0] == "help" {
		fmt.Fprint(env.stderr, usageText)
		return nil
	}
	if cmd := lookup(args[0]); cmd != nil {
		env.creates = createsData(args[0])
		return cmd(ctx, env, args[1:])
	}
	if len(args) >= 2 {
		if cmd := lookup(args[0] + " " + args[1]); cmd != nil {
			env.creates = createsData(args[0] + " " + args[1])
			return cmd(ctx, env, args[2:])
		}
	}
	if group := args[0]; isGroup(group) {
		switch {
		case len(args) > 1 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help"):
			fmt.Fprint(env.stderr, usageOf(group))
			return flag.ErrHelp
		case len(args) == 1 || strings.HasPrefix(args[1], "-"):
			return usagef(group, "needs a command")
		}
		return usagef(group, "unknown command %q", args[1])
	}
	return usagef("", "unknown command %q", args[0])
}

// isGroup reports whether name is the first word of commands of two words
// ("key" of "key create").
func isGroup(name string) bool {
	return name != "" && !strings.ContainsAny(name, " []") && strings.Contains(usageText, "\n  server "+name+" ")
}
