package main

import (
	"context"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// cmdUserSetPassword: user set-password -project P -email E; the new
// password is read as user create reads it (the first line of stdin, or
// typed on a terminal). It ends every session of the user, on every
// instance, and prints the user as user create does. The audit log records
// it as a password set, by the command line.
func cmdUserSetPassword(ctx context.Context, env *env, args []string) error {
	fs, sf, project, email, err := userFlags(env, "user set-password", args)
	if err != nil {
		return err
	}
	password, err := readPassword(env, email)
	if err != nil {
		return err
	}
	if err := identity.CheckPassword(password); err != nil {
		return invalidArg(fs.Name(), err)
	}
	return changeUser(ctx, env, sf, project, email, func(users *identity.Users, ctx context.Context, project, id string) (store.User, error) {
		u, err := users.ResetPassword(ctx, project, id, password)
		if err != nil {
			return u, invalidArg(fs.Name(), err)
		}
		return u, nil
	})
}
