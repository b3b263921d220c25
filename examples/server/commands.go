package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/keys"
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
// arguments named are given, that the flags named by needed are not empty,
// and that the store flags make sense.
func parseArgs(fs *flag.FlagSet, sf *storeFlags, args, positional []string, needed ...string) error {
	if err := parse(fs, args, positional...); err != nil {
		return err
	}
	if err := required(fs, needed...); err != nil {
		return err
	}
	return sf.check(fs)
}

// with opens the instance the flags name, with the one-shot commands'
// logger, no background pruning, and tokens minted with the issuer of
// publicURL, or, when it is "", of the public URL
// a serve recorded in the store (recordedPublicURL; none when no serve
// did), runs do on it and closes it. The actions do takes are audited as
// the command line's (audit.CLI).
func (s *storeFlags) with(ctx context.Context, env *env, publicURL string, do func(ctx context.Context, inst *instance) error) error {
	var recordErr error
	inst, err := s.open(ctx, env, quietLogger(env), latchkey.Options{
		Issuer:        issuerFor(publicURL),
		PruneInterval: -1,
	}, func(st store.Store, o *latchkey.Options) {
		if publicURL == "" {
			var recorded string
			recorded, recordErr = recordedPublicURL(ctx, st)
			o.Issuer = issuerFor(recorded)
		}
	})
	if err != nil {
		return err
	}
	defer inst.Close()
	if recordErr != nil {
		return recordErr
	}
	return do(audit.NewContext(ctx, audit.CLI), inst)
}

// noProject turns store.ErrNotFound, which the services the commands call
// return for an unknown project, into the "no project" error; other errors,
// and nil, pass unchanged.
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

// cmdProjectCreate: project create [-alg A] NAME.
func cmdProjectCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "project create")
	alg := registerAlg(fs, "signing algorithm of the project: EdDSA (default), ES256 or RS256")
	if err := parseArgs(fs, sf, args, []string{"NAME"}); err != nil {
		return err
	}
	name := fs.Arg(0)
	if !store.ValidProjectID(name) {
		return usagef(fs.Name(), "project name %q must match [a-z0-9][a-z0-9-]{0,62}", name)
	}
	if err := checkAlg(fs, *alg); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		p, err := inst.lk.CreateProjectWith(ctx, name, &latchkey.ProjectOptions{Algorithm: *alg})
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("project %q already exists", name)
		}
		if err != nil {
			return err
		}
		return env.out.print(map[string]any{"id": p.ID, "created_at": timeJSON(p.CreatedAt)})
	})
}

// userJSON is a user as the user commands print it; never the password
// hash.
func userJSON(u store.User) map[string]any {
	return map[string]any{
		"id": u.ID, "project": u.ProjectID, "email": u.Email, "tags": u.Tags,
		"created_at": timeJSON(u.CreatedAt), "disabled_at": timeJSON(u.DisabledAt),
	}
}

// cmdUserCreate: user create -project P -email E [-tags a,b], password from
// the first line of stdin.
func cmdUserCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "user create")
	project := fs.String("project", "", "project of the user")
	email := fs.String("email", "", "email address of the user")
	tags := fs.String("tags", "", "comma-separated tags, for example admin,support")
	if err := parseArgs(fs, sf, args, nil, "project", "email"); err != nil {
		return err
	}
	password, err := readPassword(env, *email)
	if err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		u, err := inst.lk.Users().Create(ctx, *project, *email, password, splitTags(*tags))
		switch {
		case errors.Is(err, store.ErrConflict):
			return fmt.Errorf("project %q already has a user with email %q", *project, *email)
		case errors.Is(err, store.ErrInvalid):
			return invalidArg(fs.Name(), err)
		case err != nil:
			return noProject(err, *project)
		}
		return env.out.print(userJSON(u))
	})
}

// cmdUserDisable: user disable -project P -email E.
func cmdUserDisable(ctx context.Context, env *env, args []string) error {
	return userChange(ctx, env, args, "user disable", (*identity.Users).Disable)
}

// cmdUserEnable: user enable -project P -email E.
func cmdUserEnable(ctx context.Context, env *env, args []string) error {
	return userChange(ctx, env, args, "user enable", (*identity.Users).Enable)
}

// userChange runs a command that changes one user named by -project and
// -email, and prints the user as changed.
func userChange(ctx context.Context, env *env, args []string, name string, change userChangeFunc) error {
	_, sf, project, email, err := userFlags(env, name, args)
	if err != nil {
		return err
	}
	return changeUser(ctx, env, sf, project, email, change)
}

// userChangeFunc changes the user id of project and returns it as changed.
type userChangeFunc func(users *identity.Users, ctx context.Context, project, id string) (store.User, error)

// userFlags parses the flags of a command that names one user by -project
// and -email.
func userFlags(env *env, name string, args []string) (fs *flag.FlagSet, sf *storeFlags, project, email string, err error) {
	fs, sf = commandFlags(env, name)
	p := fs.String("project", "", "project of the user")
	e := fs.String("email", "", "email address of the user")
	if err := parseArgs(fs, sf, args, nil, "project", "email"); err != nil {
		return nil, nil, "", "", err
	}
	return fs, sf, *p, *e, nil
}

// changeUser applies change to the user of project with email, and prints
// the user as changed.
func changeUser(ctx context.Context, env *env, sf *storeFlags, project, email string, change userChangeFunc) error {
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, project); err != nil {
			return err
		}
		users := inst.lk.Users()
		u, err := users.GetByEmail(ctx, project, email)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return fmt.Errorf("project %q has no user with email %q", project, email)
		}
		if err != nil {
			return err
		}
		if u, err = change(users, ctx, project, u.ID); err != nil {
			return err
		}
		return env.out.print(userJSON(u))
	})
}

// cmdUserList: user list -project P; one user per line, oldest first.
func cmdUserList(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "user list")
	project := fs.String("project", "", "project whose users to list")
	prefix := fs.String("email-prefix", "", "list only users whose email starts with this (case-insensitively)")
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		req := paginate.Request{Limit: paginate.MaxLimit}
		for {
			page, err := inst.lk.Users().List(ctx, *project, *prefix, req)
			if err != nil {
				return err
			}
			for _, u := range page.Items {
				if err := env.out.print(userJSON(u)); err != nil {
					return err
				}
			}
			if !page.HasMore {
				return nil
			}
			last := page.Items[len(page.Items)-1]
			req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
		}
	})
}

// readPassword reads the new user's password: on a terminal, after a prompt
// on stderr and without echo; otherwise the first line of stdin, without
// its line ending.
func readPassword(env *env, email string) (string, error) {
	if f, ok := env.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(env.stderr, "Password for %s: ", email)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		if len(b) == 0 {
			return "", errors.New("the password is empty")
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(env.stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("reading the password from the first line of stdin: none given")
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("the password (first line of stdin) is empty")
	}
	return line, nil
}

// splitTags splits "a, b" into [a b]; "" is no tags. White space around a
// tag goes, nothing else is changed or dropped: the store refuses malformed
// tags ("a,,b", "Ops Team") rather than have them change silently.
func splitTags(s string) []string {
	if strings.TrimSpace(s) == "" {
		return []string{}
	}
	tags := strings.Split(s, ",")
	for i, t := range tags {
		tags[i] = strings.TrimSpace(t)
	}
	return tags
}

// cmdContactCreate: contact create -project P -name N.
func cmdContactCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "contact create")
	project := fs.String("project", "", "project of the contact")
	name := fs.String("name", "", "name of the contact")
	if err := parseArgs(fs, sf, args, nil, "project", "name"); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		c, err := inst.st.CreateContact(ctx, store.Contact{
			ID: store.NewID(store.PrefixContact), ProjectID: *project, Name: strings.TrimSpace(*name), CreatedAt: time.Now(),
		})
		if errors.Is(err, store.ErrInvalid) {
			return invalidArg(fs.Name(), err)
		}
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
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	if *n <= 0 {
		return usagef(fs.Name(), "-n must be a number of contacts above 0")
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		start := time.Now()
		if err := seedContacts(ctx, inst.st, time.Now, *project, *n); err != nil {
			return err
		}
		return env.out.print(map[string]any{"project": *project, "seeded": *n, "seconds": time.Since(start).Seconds()})
	})
}

// cmdKeyCreate: key create -project P -name N [-scope S]... [-expires-in D];
// prints the token once, with the scopes and expiry when given.
func cmdKeyCreate(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key create")
	project := fs.String("project", "", "project of the key")
	name := fs.String("name", "", "label of the key")
	var scopes repeated
	fs.Var(&scopes, "scope", "a scope the key holds, [a-z0-9_.:-]{1,64} (repeatable; none: the key may do everything)")
	expiresIn := fs.Duration("expires-in", 0, "lifetime of the key, for example 2160h (0: permanent)")
	publicURL := registerPublicURL(fs, env)
	if err := parseArgs(fs, sf, args, nil, "project", "name"); err != nil {
		return err
	}
	if *expiresIn < 0 {
		return usagef(fs.Name(), "-expires-in must not be negative")
	}
	return sf.with(ctx, env, *publicURL, func(ctx context.Context, inst *instance) error {
		k, token, err := inst.lk.APIKeys().CreateKey(ctx, *project, keys.NewKey{Name: *name, Scopes: scopes, ExpiresIn: *expiresIn})
		if errors.Is(err, keys.ErrInvalidName) || errors.Is(err, keys.ErrInvalidScope) {
			return invalidArg(fs.Name(), err)
		}
		if errors.Is(err, keys.ErrInvalidDuration) {
			return usagef(fs.Name(), "-expires-in must be at least 1s")
		}
		if err != nil {
			return noProject(err, *project)
		}
		return env.out.print(createdKeyJSON(k, token))
	})
}

// createdKeyJSON is a new key as key create and key roll print it: its id,
// name and token, and its scopes and expiry when it has them.
func createdKeyJSON(k store.APIKey, token string) map[string]any {
	m := map[string]any{"id": k.ID, "name": k.Name, "token": token}
	if len(k.Scopes) > 0 {
		m["scopes"] = k.Scopes
	}
	if !k.ExpiresAt.IsZero() {
		m["expires_at"] = timeJSON(k.ExpiresAt)
	}
	return m
}

// cmdKeyRoll: key roll -project P [-overlap D] ID; a successor with the
// key's name and scopes, printed like key create with rolled_from, and when
// the old key stops (overlap_ends_at).
func cmdKeyRoll(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key roll")
	project := fs.String("project", "", "project of the key")
	overlap := fs.Duration("overlap", keys.DefaultOverlap, "how long the old key keeps working (0: revoked at once)")
	publicURL := registerPublicURL(fs, env)
	if err := parseArgs(fs, sf, args, []string{"ID"}, "project"); err != nil {
		return err
	}
	if *overlap < 0 {
		return usagef(fs.Name(), "-overlap must not be negative")
	}
	id := fs.Arg(0)
	return sf.with(ctx, env, *publicURL, func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		old, next, token, err := inst.lk.APIKeys().Roll(ctx, *project, id, *overlap)
		switch {
		case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
			return fmt.Errorf("project %q has no API key %q", *project, id)
		case errors.Is(err, store.ErrRevoked):
			return fmt.Errorf("API key %q is revoked; create a new key instead", id)
		case errors.Is(err, store.ErrExpired):
			return fmt.Errorf("API key %q has expired; create a new key instead", id)
		case errors.Is(err, store.ErrConflict):
			return fmt.Errorf("API key %q was rolled already; roll its successor", id)
		case err != nil:
			return err
		}
		m := createdKeyJSON(next, token)
		m["rolled_from"] = id
		m["overlap_ends_at"] = timeJSON(old.StopsAt())
		return env.out.print(m)
	})
}

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// keyJSON is a key record as key list prints it at now; never the token.
// revokes_at is a scheduled revocation (the old key of a roll) still to
// come; once its time has passed the key is revoked, and revoked_at is that
// time, as in the revocation feed.
func keyJSON(k store.APIKey, now time.Time) map[string]any {
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	revokedAt, revokesAt := k.RevokedAt, k.RevokesAt
	if revokedAt.IsZero() && k.RevokedBy(now) {
		revokedAt, revokesAt = revokesAt, time.Time{}
	}
	m := map[string]any{
		"id": k.ID, "name": k.Name, "created_at": timeJSON(k.CreatedAt),
		"last_used_at": timeJSON(k.LastUsedAt), "revoked_at": timeJSON(revokedAt),
		"scopes": scopes, "expires_at": timeJSON(k.ExpiresAt), "revokes_at": timeJSON(revokesAt),
	}
	if k.RolledFrom != "" {
		m["rolled_from"] = k.RolledFrom
	}
	if k.RolledTo != "" {
		m["rolled_to"] = k.RolledTo
	}
	return m
}

// cmdKeyList: key list -project P.
func cmdKeyList(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key list")
	project := fs.String("project", "", "project whose keys to list")
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		ks, err := inst.lk.APIKeys().List(ctx, *project)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, k := range ks {
			if err := env.out.print(keyJSON(k, now)); err != nil {
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
	if err := parseArgs(fs, sf, args, []string{"ID"}, "project"); err != nil {
		return err
	}
	id := fs.Arg(0)
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		if err := inst.lk.APIKeys().Revoke(ctx, *project, id); errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return fmt.Errorf("project %q has no API key %q", *project, id)
		} else if err != nil {
			return err
		}
		k, err := inst.st.GetAPIKey(ctx, *project, id)
		if err != nil {
			return err
		}
		return env.out.print(keyJSON(k, time.Now()))
	})
}

// cmdAuditList: audit list -project P [-limit N] [-cursor C]; the audit
// log, newest first, one entry per line. Without -limit every entry is
// printed; with it one page, followed by a {"pagination": ...} line whose
// next_cursor, given as -cursor, prints the next page.
func cmdAuditList(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "audit list")
	project := fs.String("project", "", "project whose audit log to list")
	limit := fs.String("limit", "", "entries per page (1 to 100); without it, every entry")
	cursor := fs.String("cursor", "", "next_cursor of the previous page")
	action := fs.String("action", "", "list only entries with this action, for example apikey.revoke")
	target := fs.String("target", "", "list only entries with this target id")
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	q := url.Values{}
	if *limit != "" {
		q.Set("limit", *limit)
	}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	req, err := paginate.ParseQuery(q.Encode())
	switch {
	case errors.Is(err, paginate.ErrInvalidLimit):
		return usagef(fs.Name(), "-limit must be an integer from 1 to %d", paginate.MaxLimit)
	case err != nil:
		return usagef(fs.Name(), "-cursor must be the next_cursor of a previous page")
	}
	all := *limit == ""
	if all {
		req.Limit = paginate.MaxLimit
	}
	filter := store.AuditFilter{Action: *action, Target: *target}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		for {
			page, err := inst.st.ListAudit(ctx, *project, filter, req)
			if err != nil {
				return err
			}
			for _, e := range page.Items {
				if err := env.out.print(map[string]any{
					"id": e.ID, "at": timeJSON(e.At), "actor": e.Actor, "action": e.Action,
					"target": e.Target, "client_addr": e.ClientAddr,
				}); err != nil {
					return err
				}
			}
			resp := paginate.ResponseOf(page, req,
				func(e store.AuditEntry) paginate.Cursor { return paginate.Cursor{ID: e.ID, CreatedAt: e.At} })
			if !all {
				return env.out.print(map[string]any{"pagination": resp.Pagination})
			}
			if !page.HasMore {
				return nil
			}
			req.After, _ = paginate.ParseCursor(resp.Pagination.NextCursor)
		}
	})
}
