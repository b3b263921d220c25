package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchVerifier starts a Latchkey server and a verifier of it, and returns
// the verifier and a login token it accepts.
func benchVerifier(b *testing.B, opts *Options) (*Verifier, string) {
	h := newHarness(b, nil)
	_, key := h.apiKey("bench")
	h.user("bench@example.com", "admin")
	login, _ := h.login("bench@example.com")
	v := h.verifier(key, opts)
	_, err := v.Verify(context.Background(), login)
	require.NoError(b, err)
	return v, login
}

// BenchmarkVerify_cached is the cost of verifying a token seen before: the
// cache lookup by SHA-256, the time checks and the revoked sets.
func BenchmarkVerify_cached(b *testing.B) {
	v, login := benchVerifier(b, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, login); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify_cachedParallel is BenchmarkVerify_cached from every
// processor at once.
func BenchmarkVerify_cachedParallel(b *testing.B) {
	v, login := benchVerifier(b, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(ctx, login); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkVerify_uncached is the cost of a token never seen before:
// decoding and the Ed25519 signature check (the cache is disabled).
func BenchmarkVerify_uncached(b *testing.B) {
	v, login := benchVerifier(b, &Options{CacheSize: -1, StaleAfter: time.Hour})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, login); err != nil {
			b.Fatal(err)
		}
	}
}
