package main

import (
	"flag"
	"strings"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
)

// corsOriginsEnv names the environment variable that gives the origins of
// -cors-origin, comma-separated.
const corsOriginsEnv = "LATCHKEY_CORS_ORIGINS"

// corsOrigins is the flag.Value of serve's repeatable -cors-origin: the
// origins whose browser pages may call the /v1 API (latchkey.Options
// CORSOrigins). Without the flag they are those of LATCHKEY_CORS_ORIGINS;
// the flag, given once or more, replaces them.
type corsOrigins struct {
	env     string   // LATCHKEY_CORS_ORIGINS as read
	flagged []string // the -cors-origin values, checked
	set     bool
}

// registerCORSOrigins registers -cors-origin on fs.
func registerCORSOrigins(fs *flag.FlagSet, env *env) *corsOrigins {
	v := &corsOrigins{env: env.getenv(corsOriginsEnv)}
	fs.Var(v, "cors-origin", "an origin (scheme://host[:port], such as https://app.example.com) whose browser pages may call the /v1 API; repeat it for several (default: "+corsOriginsEnv+", comma-separated; none when unset)")
	return v
}

func (v *corsOrigins) String() string { return strings.Join(v.flagged, ",") }

func (v *corsOrigins) Set(s string) error {
	o, err := httpapi.CanonicalOrigin(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	v.flagged = append(v.flagged, o)
	v.set = true
	return nil
}

// list returns the origins: the flags', or else those of
// LATCHKEY_CORS_ORIGINS (empty items ignored), or a usage error naming an
// origin of the variable that is not one.
func (v *corsOrigins) list() ([]string, error) {
	if v.set {
		return v.flagged, nil
	}
	var out []string
	for _, s := range strings.Split(v.env, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		o, err := httpapi.CanonicalOrigin(s)
		if err != nil {
			return nil, usagef("serve", "%s: %v", corsOriginsEnv, err)
		}
		out = append(out, o)
	}
	return out, nil
}
