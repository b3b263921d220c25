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
//	serve (default) [-addr 127.0.0.1:8080] [-data DIR] [-db URL] [-demo] [-login-address-limit N]
//	project create [-data DIR] [-db URL] NAME
//	user create    [-data DIR] [-db URL] -project P -email E [-tags a,b]   (password: first line of stdin)
//	contact create [-data DIR] [-db URL] -project P -name N
//	contact seed   [-data DIR] [-db URL] -project P -n N
//	key create     [-data DIR] [-db URL] -project P -name N
//	key list       [-data DIR] [-db URL] -project P
//	key revoke     [-data DIR] [-db URL] -project P ID
//
// Flags come before positional arguments. Every command prints JSON, one
// object per line, on stdout; errors go to stderr with exit status 1 (2 for
// a usage error).
//
// # Storage and master key
//
// -data DIR (default ./latchkey-data) holds the SQLite database latchkey.db
// and master.key. -db postgres://... uses PostgreSQL instead of SQLite.
// The master key is LATCHKEY_MASTER_KEY (base64 of 32 bytes) if set, else
// DIR/master.key, created with mode 0600 on first use. Commands are safe to
// run while servers use the same store; what they change is served at once.
//
// # Serving
//
// The server serves project P at http://ADDR/p/P and the project default
// also at http://ADDR. It prints {"event":"listening",...} on stdout when it
// accepts connections, logs one JSON line per request to stderr (never a
// token, a password or a query string), answers GET /healthz, and on SIGINT
// or SIGTERM finishes in-flight requests before closing the store.
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
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks an error in the command line; it exits with status 2.
var errUsage = errors.New("usage")

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &env{stdin: stdin, out: newOutput(stdout), stderr: stderr, getenv: os.Getenv}
	err := dispatch(ctx, env, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "latchkey: %v\n", err)
		fmt.Fprint(stderr, usageText)
		return 2
	default:
		fmt.Fprintf(stderr, "latchkey: %v\n", err)
		return 1
	}
}

const usageText = `usage:
  server [serve] [-addr 127.0.0.1:8080] [-data DIR] [-db URL] [-demo] [-login-address-limit N]
  server project create [-data DIR] [-db URL] NAME
  server user create    [-data DIR] [-db URL] -project P -email E [-tags a,b]   (password: first line of stdin)
  server contact create [-data DIR] [-db URL] -project P -name N
  server contact seed   [-data DIR] [-db URL] -project P -n N
  server key create     [-data DIR] [-db URL] -project P -name N
  server key list       [-data DIR] [-db URL] -project P
  server key revoke     [-data DIR] [-db URL] -project P ID
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
	case "contact create":
		return cmdContactCreate
	case "contact seed":
		return cmdContactSeed
	case "key create":
		return cmdKeyCreate
	case "key list":
		return cmdKeyList
	case "key revoke":
		return cmdKeyRevoke
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
		return cmdServe(ctx, env, args)
	}
	if args[0] == "help" {
		fmt.Fprint(env.stderr, usageText)
		return nil
	}
	if cmd := lookup(args[0]); cmd != nil {
		return cmd(ctx, env, args[1:])
	}
	if len(args) >= 2 {
		if cmd := lookup(args[0] + " " + args[1]); cmd != nil {
			return cmd(ctx, env, args[2:])
		}
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}
