package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// timeJSON formats t as the API does (RFC 3339, UTC, microseconds); the
// zero time is null.
func timeJSON(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(paginate.TimeLayout)
}

// quietLogger is the logger of the one-shot commands: warnings and errors
// only, as text on stderr.
func quietLogger(env *env) *slog.Logger {
	return slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// commandFlags returns the flag set of one-shot command name with the
// store flags (-data, -db) registered on it.
func commandFlags(env *env, name string) (*flag.FlagSet, *storeFlags) {
	fs := newFlags(env, name)
	sf := &storeFlags{}
	sf.register(fs)
	return fs, sf
}

// parseArgs parses args with fs, checks that exactly the positional
// arguments named are given, then that the flags named by needed are not
// empty.
func parseArgs(fs *flag.FlagSet, args, positional []string, needed ...string) error {
	if err := parse(fs, args, positional...); err != nil {
		return err
	}
	return required(fs, needed...)
}

// with opens the instance the flags name, with the one-shot commands'
// logger, runs do on it and closes it.
func (s *storeFlags) with(ctx context.Context, env *env, do func(inst *instance) error) error {
	inst, err := s.open(ctx, env, quietLogger(env), nil)
	if err != nil {
		return err
	}
	defer inst.Close()
	return do(inst)
}

// noProject turns store.ErrNotFound, which the Latchkey methods the commands
// call return for an unknown project, into the "no project" error; other
// errors, and nil, pass unchanged.
func noProject(err error, project string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no project %q", project)
	}
	return err
}

// checkProject returns the "no project" error when project does not exist.
// Any other error of the look-up is left for the command's next step to
// meet.
func checkProject(ctx context.Context, inst *instance, project string) error {
	if _, err := inst.st.GetProject(ctx, project); errors.Is(err, store.ErrNotFound) {
		return noProject(err, project)
	}
	return nil
}

// cmdProjectCreate: project create NAME.
func cmdProjectCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "project create")
	if err := parseArgs(fs, args, []string{"NAME"}); err != nil {
		return err
	}
	name := fs.Arg(0)
	if !store.ValidProjectID(name) {
		return fmt.Errorf("%w: project name %q must match [a-z0-9][a-z0-9-]{0,62}", errUsage, name)
	}
	return sf.with(ctx, env, func(inst *instance) error {
		p, err := inst.lk.CreateProject(ctx, name)
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("project %q already exists", name)
		}
		if err != nil {
			return err
		}
		return env.out.print(map[string]any{"id": p.ID, "created_at": timeJSON(p.CreatedAt)})
	})
}

// cmdUserCreate: user create -project P -email E [-tags a,b], password from
// the first line of stdin.
func cmdUserCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "user create")
	project := fs.String("project", "", "project of the user")
	email := fs.String("email", "", "email address of the user")
	tags := fs.String("tags", "", "comma-separated tags, for example admin")
	if err := parseArgs(fs, args, nil, "project", "email"); err != nil {
		return err
	}
	password, err := readPassword(env.stdin)
	if err != nil {
		return err
	}
	return sf.with(ctx, env, func(inst *instance) error {
		u, err := inst.lk.CreateUser(ctx, *project, *email, password, splitTags(*tags))
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("project %q already has a user with email %q", *project, *email)
		}
		if err != nil {
			return noProject(err, *project)
		}
		return env.out.print(map[string]any{
			"id": u.ID, "project": u.ProjectID, "email": u.Email, "tags": u.Tags, "created_at": timeJSON(u.CreatedAt),
		})
	})
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("reading the password from the first line of stdin: none given")
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("the password (first line of stdin) is empty")
	}
	return line, nil
}

// splitTags splits "a, b,,c" into [a b c].
func splitTags(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// cmdContactCreate: contact create -project P -name N.
func cmdContactCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "contact create")
	project := fs.String("project", "", "project of the contact")
	name := fs.String("name", "", "name of the contact")
	if err := parseArgs(fs, args, nil, "project", "name"); err != nil {
		return err
	}
	return sf.with(ctx, env, func(inst *instance) error {
		c, err := inst.lk.CreateContact(ctx, *project, *name)
		if err != nil {
			return noProject(err, *project)
		}
		return env.out.print(map[string]any{"id": c.ID, "project": c.ProjectID, "name": c.Name, "created_at": timeJSON(c.CreatedAt)})
	})
}

// cmdContactSeed: contact seed -project P -n N.
func cmdContactSeed(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "contact seed")
	project := fs.String("project", "", "project to seed")
	n := fs.Int("n", 0, "number of contacts to add")
	if err := parseArgs(fs, args, nil, "project"); err != nil {
		return err
	}
	if *n <= 0 {
		return fmt.Errorf("%w: contact seed needs -n N with N > 0", errUsage)
	}
	return sf.with(ctx, env, func(inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		start := time.Now()
		if err := inst.lk.SeedContacts(ctx, *project, *n, nil); err != nil {
			return err
		}
		return env.out.print(map[string]any{"project": *project, "seeded": *n, "seconds": time.Since(start).Seconds()})
	})
}

// cmdKeyCreate: key create -project P -name N; prints the token once.
func cmdKeyCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key create")
	project := fs.String("project", "", "project of the key")
	name := fs.String("name", "", "label of the key")
	if err := parseArgs(fs, args, nil, "project", "name"); err != nil {
		return err
	}
	return sf.with(ctx, env, func(inst *instance) error {
		k, token, err := inst.lk.CreateAPIKey(ctx, *project, *name)
		if err != nil {
			return noProject(err, *project)
		}
		return env.out.print(map[string]any{"id": k.ID, "name": k.Name, "token": token})
	})
}

// keyJSON is a key record as key list prints it; never the token.
func keyJSON(k store.APIKey) map[string]any {
	return map[string]any{
		"id": k.ID, "name": k.Name, "created_at": timeJSON(k.CreatedAt),
		"last_used_at": timeJSON(k.LastUsedAt), "revoked_at": timeJSON(k.RevokedAt),
	}
}

// cmdKeyList: key list -project P.
func cmdKeyList(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key list")
	project := fs.String("project", "", "project whose keys to list")
	if err := parseArgs(fs, args, nil, "project"); err != nil {
		return err
	}
	return sf.with(ctx, env, func(inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		ks, err := inst.lk.ListAPIKeys(ctx, *project)
		if err != nil {
			return err
		}
		for _, k := range ks {
			if err := env.out.print(keyJSON(k)); err != nil {
				return err
			}
		}
		return nil
	})
}

// cmdKeyRevoke: key revoke -project P ID; prints the revoked key's record.
func cmdKeyRevoke(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key revoke")
	project := fs.String("project", "", "project of the key")
	if err := parseArgs(fs, args, []string{"ID"}, "project"); err != nil {
		return err
	}
	id := fs.Arg(0)
	return sf.with(ctx, env, func(inst *instance) error {
		if err := inst.lk.RevokeAPIKey(ctx, *project, id); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("project %q has no API key %q", *project, id)
		} else if err != nil {
			return err
		}
		k, err := inst.st.GetAPIKey(ctx, *project, id)
		if err != nil {
			return err
		}
		return env.out.print(keyJSON(k))
	})
}
