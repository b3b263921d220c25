package keys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// The cost of each signing algorithm, for docs/benchmarks.md's section on signing algorithms:
// what a login pays to sign its token (BenchmarkMint_Algorithm) and what a
// verification of a token not yet in the cache pays
// (BenchmarkVerify_FirstAlgorithm). Run with
//
//	go test -run '^$' -bench 'Algorithm' -count 5 ./keys
//
// Besides ns/op (wall time), each reports cpu-ns/op: the process's CPU
// time per operation, which stays meaningful on a machine whose cores
// other work shares.

// loop runs op b.N times (b.Loop) and reports its CPU time per operation.
func loop(b *testing.B, op func() error) {
	b.ReportAllocs()
	var cpu0 time.Duration
	started := false
	for b.Loop() {
		if !started {
			cpu0, started = processCPU(), true
		}
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := processCPU() - cpu0; cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkMint_Algorithm mints a login token with the project's active
// key, as a login or refresh does: one store read of the active key (the
// real SQLite store), the claims, and the signature. The decrypted key is
// cached, as it is after a project's first mint.
func BenchmarkMint_Algorithm(b *testing.B) {
	for _, alg := range keys.Algorithms() {
		b.Run(alg, func(b *testing.B) {
			e := newEnv(b, nil)
			e.createProjectAlg("alpha", alg)
			u := e.user("alpha", "admin")
			sid := e.session(u)
			ctx := context.Background()
			if _, _, err := e.kr.MintLoginToken(ctx, "alpha", u, sid); err != nil { // warm the key cache
				b.Fatal(err)
			}
			loop(b, func() error {
				_, _, err := e.kr.MintLoginToken(ctx, "alpha", u, sid)
				return err
			})
		})
	}
}

// BenchmarkVerify_FirstAlgorithm verifies a login token as if never seen
// (the verification cache disabled): decoding, the signing key's record,
// the signature with the key's algorithm, the session's record. "sqlite"
// reads the records from the real store (kept while its change version
// holds), "nostore" from a snapshot, to show the algorithm's share.
func BenchmarkVerify_FirstAlgorithm(b *testing.B) {
	for _, alg := range keys.Algorithms() {
		b.Run(alg, func(b *testing.B) {
			e := newEnv(b, nil)
			sk := e.createProjectAlg("alpha", alg)
			ctx := context.Background()
			login, sid := e.loginTokenOf(e.user("alpha"))
			session, err := e.st.GetRefreshFamily(ctx, "alpha", sid)
			require.NoError(b, err)
			snap := &snapshotStore{
				signing:  map[string]store.SigningKey{"alpha/" + sk.ID: sk},
				sessions: map[string]store.RefreshFamily{"alpha/" + sid: session},
			}
			o := &keys.VerifierOptions{Now: e.clock.Now, CacheSize: -1, Logger: testLogger(b)}
			for name, v := range map[string]*keys.Verifier{
				"sqlite":  keys.NewVerifier(e.st.Store, o),
				"nostore": keys.NewVerifier(snap, o),
			} {
				b.Run(name, func(b *testing.B) {
					if _, err := v.Verify(ctx, "alpha", login); err != nil {
						b.Fatal(err)
					}
					loop(b, func() error {
						_, err := v.Verify(ctx, "alpha", login)
						return err
					})
				})
			}
		})
	}
}

// BenchmarkSignature_Algorithm is the algorithm alone: golang-jwt's
// method of each algorithm signing and verifying a login token's signing
// input with a key of the kind Rotate makes.
func BenchmarkSignature_Algorithm(b *testing.B) {
	e := newEnv(b, nil)
	for _, alg := range keys.Algorithms() {
		rec := e.createProjectAlg("p-"+strings.ToLower(alg), alg)
		priv := signerOf(b, e.master, rec)
		pub, err := keys.ParsePublicKey(alg, rec.PublicKey)
		require.NoError(b, err)
		login := e.loginToken(rec.ProjectID)
		input := login[:strings.LastIndexByte(login, '.')]
		m := jwt.GetSigningMethod(alg)
		sig, err := m.Sign(input, priv)
		require.NoError(b, err)
		b.Run(alg+"/sign", func(b *testing.B) {
			loop(b, func() error {
				_, err := m.Sign(input, priv)
				return err
			})
		})
		b.Run(alg+"/verify", func(b *testing.B) {
			loop(b, func() error { return m.Verify(input, sig, pub.Key) })
		})
	}
}
