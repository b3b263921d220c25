package main

import (
	"encoding/json"
	"flag"
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
	// creates is set for the commands that may create the store's data
	// when there is none (see createsData); the others refuse to run.
	creates bool
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

// newFlags returns a flag set for command name whose errors make the
// command fail with a usage error (the command's usage line is printed
// then, not the flag package's own block).
func newFlags(env *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args with fs and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, positional ...string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return &helpRequest{fs: fs}
		}
		return usagef(fs.Name(), "%v", err)
	}
	if fs.NArg() != len(positional) {
		if len(positional) == 0 {
			return usagef(fs.Name(), "takes no arguments after its flags, got %q (flags come before arguments)", fs.Args())
		}
		return usagef(fs.Name(), "needs %v after its flags, got %q (flags come before arguments)", positional, fs.Args())
	}
	return nil
}

// required fails with a usage error when a required flag is empty.
func required(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if fs.Lookup(n).Value.String() == "" {
			return usagef(fs.Name(), "needs -%s", n)
		}
	}
	return nil
}
