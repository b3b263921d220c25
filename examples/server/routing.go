package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// The example server serves project P at base_url {public}/p/P, and the
// project default also at {public} itself.
const projectPathPrefix = "/p/"

// issuerFor returns the base_url of each project under publicURL, the iss
// of the tokens minted for it: publicURL for the project default (whichever
// path served the request), publicURL/p/P for project P. An empty publicURL
// gives no issuer: tokens are minted without iss.
func issuerFor(publicURL string) func(project string) string {
	publicURL = strings.TrimSuffix(publicURL, "/")
	return func(project string) string {
		switch {
		case publicURL == "":
			return ""
		case project == store.DefaultProject:
			return publicURL
		}
		return publicURL + projectPathPrefix + project
	}
}

// recordPublicURL records publicURL in st as the deployment's public URL
// (store.SettingPublicURL), for the commands that mint tokens without
// being told it (recordedPublicURL). serve records the URL it mints with.
func recordPublicURL(ctx context.Context, st store.Store, publicURL string) error {
	if err := st.SetSetting(ctx, store.SettingPublicURL, publicURL); err != nil {
		return fmt.Errorf("recording the public URL: %w", err)
	}
	return nil
}

// publicURLRetry is how often serve tries again to record its public URL
// in a store that took no writes when it started.
const publicURLRetry = time.Second

// recordPublicURLWhenWritable records publicURL in st as recordPublicURL
// does. A store that takes no writes now (store.ErrUnavailable: a standby,
// a database failing over) does not keep serve from starting: the URL is
// recorded in the background once the store takes it, retried every
// publicURLRetry until ctx ends. Any other failure is returned. stop ends
// the retries and waits for them; it may be called more than once.
func recordPublicURLWhenWritable(ctx context.Context, st store.Store, publicURL string, logger *slog.Logger) (stop func(), err error) {
	err = recordPublicURL(ctx, st, publicURL)
	if err == nil || !errors.Is(err, store.ErrUnavailable) {
		return func() {}, err
	}
	logger.WarnContext(ctx, "the store takes no writes now; the public URL is recorded once it does", "err", err)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(publicURLRetry)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := recordPublicURL(ctx, st, publicURL)
			switch {
			case err == nil:
				logger.InfoContext(ctx, "recorded the public URL", "public_url", publicURL)
				return
			case !errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil:
				logger.ErrorContext(ctx, "recording the public URL", "err", err)
				return
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// recordedPublicURL returns the public URL a serve recorded in st, or ""
// when none did.
func recordedPublicURL(ctx context.Context, st store.Store) (string, error) {
	u, err := st.GetSetting(ctx, store.SettingPublicURL)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the public URL serve recorded: %w", err)
	}
	return u, nil
}

// publicURLEnv names the environment variable that gives -public-url.
const publicURLEnv = "LATCHKEY_PUBLIC_URL"

// registerPublicURL registers -public-url on fs, defaulting to
// LATCHKEY_PUBLIC_URL, and returns its value, checked by checkPublicURL when
// fs is parsed.
func registerPublicURL(fs *flag.FlagSet, env *env) *string {
	v := &publicURLValue{s: env.getenv(publicURLEnv)}
	fs.Var(v, "public-url", "the deployment's public URL, for example https://id.example.com: tokens carry {public}/p/P (project P) or {public} (default) as iss (default: "+publicURLEnv+"; serve: http://ADDR, which serve records in the store; other commands: the URL serve recorded)")
	return &v.s
}

// publicURLValue is the flag.Value of -public-url: an absolute http or https
// URL with no query or fragment; a trailing slash is dropped.
type publicURLValue struct{ s string }

func (v *publicURLValue) String() string { return v.s }

func (v *publicURLValue) Set(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an http or https URL such as https://id.example.com", s)
	}
	v.s = strings.TrimSuffix(s, "/")
	return nil
}
