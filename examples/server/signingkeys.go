package main

import (
	"context"
	"flag"
	"slices"
	"strings"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// registerAlg registers -alg on fs.
func registerAlg(fs *flag.FlagSet, usage string) *string {
	return fs.String("alg", "", usage)
}

// checkAlg refuses an -alg that is not one of the algorithms ("" is
// fine: the default).
func checkAlg(fs *flag.FlagSet, alg string) error {
	if alg != "" && !slices.Contains(keys.Algorithms(), alg) {
		return usagef(fs.Name(), "-alg %q must be one of %s", alg, strings.Join(keys.Algorithms(), ", "))
	}
	return nil
}

// signingKeyJSON is a signing key as the commands print it: never its
// private key.
func signingKeyJSON(k store.SigningKey) map[string]any {
	return map[string]any{"kid": k.ID, "alg": k.Algorithm, "created_at": timeJSON(k.CreatedAt)}
}

// cmdKeyRotateSigning: key rotate-signing -project P [-alg A]; makes a new
// active signing key (of the active key's algorithm unless -alg names
// another) and prints {"kid","alg","created_at"}.
func cmdKeyRotateSigning(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "key rotate-signing")
	project := fs.String("project", "", "project whose signing key to rotate")
	alg := registerAlg(fs, "algorithm of the new key: EdDSA, ES256 or RS256 (default: the active key's)")
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	if err := checkAlg(fs, *alg); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		k, err := inst.lk.Keyring().RotateTo(ctx, *project, *alg)
		if err != nil {
			return noProject(err, *project)
		}
		return env.out.print(signingKeyJSON(k))
	})
}

// cmdSigningKeyList: signing-key list -project P; one line per key, oldest
// first: kid, alg, created_at, retired_at (null while it verifies) and
// active.
func cmdSigningKeyList(ctx context.Context, env *env, args []string) error {
	fs, sf := commandFlags(env, "signing-key list")
	project := fs.String("project", "", "project whose signing keys to list")
	if err := parseArgs(fs, sf, args, nil, "project"); err != nil {
		return err
	}
	return sf.with(ctx, env, "", func(ctx context.Context, inst *instance) error {
		if err := checkProject(ctx, inst, *project); err != nil {
			return err
		}
		ks, err := inst.st.ListSigningKeys(ctx, *project)
		if err != nil {
			return err
		}
		active := ""
		for _, k := range slices.Backward(ks) {
			if !k.Retired() {
				active = k.ID
				break
			}
		}
		for _, k := range ks {
			line := signingKeyJSON(k)
			line["retired_at"] = timeJSON(k.RetiredAt)
			line["active"] = k.ID == active
			if err := env.out.print(line); err != nil {
				return err
			}
		}
		return nil
	})
}
