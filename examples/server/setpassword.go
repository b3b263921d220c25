package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// cmdUserSetPassword: user set-password -project P -email E; the new
// password is read as user create reads it (the first line of stdin, or
// typed on a terminal). It ends every session of the user, on every
// instance, and prints the user as user create does. The audit log records
// it as a password set, by the command line.
func cmdUserSetPassword(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "user set-password")
	project := fs.String("project", "", "project of the user")
	email := fs.String("email", "", "email address of the user")
	if err := parseArgs(fs, sf, args, nil, "project", "email"); err != nil {
		return err
	}
	password, err := readPassword(env, *email)
	if err != nil {
		return err
	}
	if err := identity.CheckPassword(password); err != nil {
		return invalidArg(fs.Name(), err)
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		users := inst.lk.Users()
		u, err := users.GetByEmail(ctx, *project, *email)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return fmt.Errorf("project %q has no user with email %q", *project, *email)
		}
		if err != nil {
			return err
		}
		if u, err = users.ResetPassword(ctx, *project, u.ID, password); err != nil {
			return invalidArg(fs.Name(), err)
		}
		return env.out.print(userJSON(u))
	})
}
