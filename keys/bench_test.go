package keys_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// snapshotStore answers the Verifier's reads from a copy of records taken
// from the real store. It exists only so the benchmarks can show the
// verifier's own cost apart from the store lookups the contract requires on
// every request; the tests never use it.
type snapshotStore struct {
	signing  map[string]store.SigningKey
	apiKeys  map[string]store.APIKey
	sessions map[string]store.RefreshFamily
}

func (s *snapshotStore) GetRefreshFamily(_ context.Context, projectID, id string) (store.RefreshFamily, error) {
	f, ok := s.sessions[projectID+"/"+id]
	if !ok {
		return store.RefreshFamily{}, store.ErrNotFound
	}
	return f, nil
}

func (s *snapshotStore) GetSigningKey(_ context.Context, projectID, id string) (store.SigningKey, error) {
	k, ok := s.signing[projectID+"/"+id]
	if !ok {
		return store.SigningKey{}, store.ErrNotFound
	}
	return k, nil
}

func (s *snapshotStore) GetAPIKey(_ context.Context, projectID, id string) (store.APIKey, error) {
	k, ok := s.apiKeys[projectID+"/"+id]
	if !ok {
		return store.APIKey{}, store.ErrNotFound
	}
	return k, nil
}

func (s *snapshotStore) TouchAPIKey(context.Context, string, string, time.Time) error { return nil }

// benchVerifiers returns, for one login token and one API key token of a
// project on a SQLite file, a Verifier on the real store ("sqlite") and one
// on a snapshot of it ("nostore").
func benchVerifiers(b *testing.B, cacheSize int) (login, apiKey string, vs map[string]*keys.Verifier) {
	e := newEnv(b, nil, "alpha")
	ctx := context.Background()
	login, sid := e.loginTokenOf(e.user("alpha", "admin"))
	session, err := e.st.GetRefreshFamily(ctx, "alpha", sid)
	var sk store.SigningKey
	require.NoError(b, err)
	k, apiKey := e.apiKey("alpha")
	// Mark the key used now, as a busy key is: no write on the benchmarked path.
	require.NoError(b, e.st.TouchAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
	sk, err = e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(b, err)
	k, err = e.st.GetAPIKey(ctx, "alpha", k.ID)
	require.NoError(b, err)
	snap := &snapshotStore{
		signing:  map[string]store.SigningKey{"alpha/" + sk.ID: sk},
		apiKeys:  map[string]store.APIKey{"alpha/" + k.ID: k},
		sessions: map[string]store.RefreshFamily{"alpha/" + sid: session},
	}
	o := &keys.VerifierOptions{Now: e.clock.Now, CacheSize: cacheSize, Logger: testLogger(b)}
	vs = map[string]*keys.Verifier{
		"sqlite":  keys.NewVerifier(e.st.Store, o),
		"nostore": keys.NewVerifier(snap, o),
	}
	return login, apiKey, vs
}

func benchVerify(b *testing.B, v *keys.Verifier, token string) {
	ctx := context.Background()
	if _, err := v.Verify(ctx, "alpha", token); err != nil { // warm the cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Verify(ctx, "alpha", token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify_Cached verifies a login token already seen: no signature
// check, one signing-key lookup (retirement) per call.
func BenchmarkVerify_Cached(b *testing.B) {
	login, _, vs := benchVerifiers(b, 0)
	for _, name := range []string{"sqlite", "nostore"} {
		b.Run(name, func(b *testing.B) { benchVerify(b, vs[name], login) })
	}
}

// BenchmarkVerify_CachedAPIKey verifies an API key token already seen: no
// signature check, one signing-key and one API-key lookup per call.
func BenchmarkVerify_CachedAPIKey(b *testing.B) {
	_, apiKey, vs := benchVerifiers(b, 0)
	for _, name := range []string{"sqlite", "nostore"} {
		b.Run(name, func(b *testing.B) { benchVerify(b, vs[name], apiKey) })
	}
}

// BenchmarkVerify_First verifies a login token as if never seen (cache
// disabled): decoding, one signing-key lookup, one Ed25519 verification.
func BenchmarkVerify_First(b *testing.B) {
	login, _, vs := benchVerifiers(b, -1)
	for _, name := range []string{"sqlite", "nostore"} {
		b.Run(name, func(b *testing.B) { benchVerify(b, vs[name], login) })
	}
}

// BenchmarkVerify_CachedParallel is BenchmarkVerify_Cached from all
// GOMAXPROCS goroutines, to show the cache's lock under contention.
func BenchmarkVerify_CachedParallel(b *testing.B) {
	login, apiKey, vs := benchVerifiers(b, 0)
	for _, name := range []string{"sqlite", "nostore"} {
		for kind, tok := range map[string]string{"login": login, "apikey": apiKey} {
			b.Run(fmt.Sprintf("%s/%s", name, kind), func(b *testing.B) {
				v := vs[name]
				ctx := context.Background()
				if _, err := v.Verify(ctx, "alpha", tok); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := v.Verify(ctx, "alpha", tok); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkStore_Lookups measures the store reads a cached verification
// still makes, on their own.
func BenchmarkStore_Lookups(b *testing.B) {
	e := newEnv(b, nil, "alpha")
	ctx := context.Background()
	sk, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(b, err)
	k, _ := e.apiKey("alpha")
	b.Run("GetSigningKey", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.st.Store.GetSigningKey(ctx, "alpha", sk.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetAPIKey", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.st.Store.GetAPIKey(ctx, "alpha", k.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEd25519Verify is the baseline BenchmarkVerify_First is judged
// against: one bare Ed25519 verification of a message of a login token's
// size.
func BenchmarkEd25519Verify(b *testing.B) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(b, err)
	msg := make([]byte, 300)
	sig := ed25519.Sign(priv, msg)
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("verify failed")
		}
	}
}
