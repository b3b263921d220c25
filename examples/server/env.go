package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sync"
)

// env is what a command may touch of the process: its standard streams and
// its environment. Tests run commands with their own.
type env struct {
	stdin  io.Reader
	out    *output
	stderr io.Writer
	getenv func(string) string
}

// output writes JSON values to stdout, one per line.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

func newOutput(w io.Writer) *output { return &output{w: w} }

// print writes v as one line of JSON.
func (o *output) print(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err = o.w.Write(append(b, '\n'))
	return err
}

// newFlags returns a flag set for command name whose errors go to stderr
// and make the command fail with a usage error.
func newFlags(env *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}

// parse parses args with fs and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, positional ...string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() != len(positional) {
		if len(positional) == 0 {
			return fmt.Errorf("%w: %s takes no arguments after its flags, got %q (flags come before arguments)", errUsage, fs.Name(), fs.Args())
		}
		return fmt.Errorf("%w: %s needs %v after its flags, got %q (flags come before arguments)", errUsage, fs.Name(), positional, fs.Args())
	}
	return nil
}

// required fails with a usage error when a required flag is empty.
func required(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if fs.Lookup(n).Value.String() == "" {
			return fmt.Errorf("%w: %s needs -%s", errUsage, fs.Name(), n)
		}
	}
	return nil
}
