package identity_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/latchkey-dev/latchkey/identity"
)

// weakArgonHash returns an argon2id PHC string of password with memory m
// KiB and t passes.
func weakArgonHash(password string, m, t uint32) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, t, m, 1, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=1$%s$%s", m, t, enc.EncodeToString(salt), enc.EncodeToString(key))
}

func TestHasher_HashVerify(t *testing.T) {
	ctx := context.Background()
	h := identity.NewHasher(nil)
	hash, err := h.Hash(ctx, "pässwörd")
	require.NoError(t, err)
	assert.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, hash)

	other, err := h.Hash(ctx, "pässwörd")
	require.NoError(t, err)
	assert.NotEqual(t, hash, other, "salts are random")

	ok, rehash, err := h.Verify(ctx, hash, "pässwörd")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.False(t, rehash)

	ok, rehash, err = h.Verify(ctx, hash, "passwörd")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.False(t, rehash)

	_, err = h.Hash(ctx, strings.Repeat("x", identity.MaxPasswordLen+1))
	assert.ErrorIs(t, err, identity.ErrPasswordTooLong)
}

// The decoy hash an unknown email is checked against has the shape and the
// parameters of a real one, so checking it costs one hash, and no password
// matches it.
func TestDecoyHash(t *testing.T) {
	ctx := context.Background()
	h := identity.NewHasher(nil)
	decoy := identity.DecoyHash()
	assert.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, decoy)
	assert.NotEqual(t, decoy, identity.DecoyHash(), "salts and keys are random")
	for _, pw := range []string{"", "pässwörd", "correct horse"} {
		ok, rehash, err := h.Verify(ctx, decoy, pw)
		require.NoError(t, err)
		assert.False(t, ok, "%q matched the decoy", pw)
		assert.False(t, rehash)
	}

	// Verifying it waits for a hashing slot, as every hash does.
	release, err := h.HoldSlots(ctx)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, _, err = h.Verify(short, decoy, "pässwörd")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	release()
}

func TestHasher_NeedsRehash(t *testing.T) {
	ctx := context.Background()
	h := identity.NewHasher(nil)
	bc, err := bcrypt.GenerateFromPassword([]byte("pw"), 4)
	require.NoError(t, err)
	cases := []struct {
		name, hash string
		rehash     bool
	}{
		{"bcrypt", string(bc), true},
		{"argon2 less memory", weakArgonHash("pw", 4096, 2), true},
		{"argon2 fewer passes", weakArgonHash("pw", 19456, 1), true},
		{"argon2 stronger", weakArgonHash("pw", 32768, 3), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, rehash, err := h.Verify(ctx, c.hash, "pw")
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, c.rehash, rehash)
			// A wrong password never asks for a rehash.
			ok, rehash, err = h.Verify(ctx, c.hash, "wrong")
			require.NoError(t, err)
			assert.False(t, ok)
			assert.False(t, rehash)
		})
	}
}

func TestHasher_Bcrypt72Bytes(t *testing.T) {
	ctx := context.Background()
	h := identity.NewHasher(nil)
	pw72 := strings.Repeat("0123456789ab", 6)
	require.Len(t, pw72, 72)
	hash, err := bcrypt.GenerateFromPassword([]byte(pw72), 4)
	require.NoError(t, err)
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		hs := prefix + string(hash[4:])
		ok, _, err := h.Verify(ctx, hs, pw72)
		require.NoError(t, err)
		assert.True(t, ok, prefix)
		for _, longer := range []string{pw72 + "x", pw72 + strings.Repeat("y", 100)} {
			ok, rehash, err := h.Verify(ctx, hs, longer)
			require.NoError(t, err)
			assert.False(t, ok, "%s: %d bytes must never match", prefix, len(longer))
			assert.False(t, rehash)
		}
	}
}

func TestHasher_MalformedHashes(t *testing.T) {
	ctx := context.Background()
	var hashed atomic.Int64 // hashes that took a slot
	h := identity.NewHasher(&identity.HasherOptions{Running: func(n int) {
		if n > 0 {
			hashed.Add(1)
		}
	}})
	salt := base64.RawStdEncoding.EncodeToString([]byte("0123456789abcdef"))
	key := base64.RawStdEncoding.EncodeToString(make([]byte, 32))
	ok := "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key
	_, _, err := h.Verify(ctx, ok, "pw")
	require.NoError(t, err, "the template is well formed")
	require.EqualValues(t, 1, hashed.Load(), "the template is hashed")

	bc, err := bcrypt.GenerateFromPassword([]byte("pw"), 4)
	require.NoError(t, err)
	cases := map[string]string{
		"empty":             "",
		"plain text":        "pw",
		"argon2i":           strings.Replace(ok, "argon2id", "argon2i", 1),
		"argon2d":           strings.Replace(ok, "argon2id", "argon2d", 1),
		"version 16":        strings.Replace(ok, "v=19", "v=16", 1),
		"no version":        "$argon2id$m=19456,t=2,p=1$" + salt + "$" + key,
		"huge memory":       strings.Replace(ok, "m=19456", "m=4294967295", 1),
		"memory over bound": strings.Replace(ok, "m=19456", fmt.Sprintf("m=%d", identity.MaxArgonMemory+1), 1),
		"memory overflow":   strings.Replace(ok, "m=19456", "m=99999999999", 1),
		"huge time":         strings.Replace(ok, "t=2", "t=1000000", 1),
		"zero time":         strings.Replace(ok, "t=2", "t=0", 1),
		"zero threads":      strings.Replace(ok, "p=1", "p=0", 1),
		"many threads":      strings.Replace(ok, "p=1", "p=255", 1),
		"memory below 8p":   strings.Replace(strings.Replace(ok, "m=19456", "m=8", 1), "p=1", "p=2", 1),
		"leading zero":      strings.Replace(ok, "m=19456", "m=019456", 1),
		"plus sign":         strings.Replace(ok, "t=2", "t=+2", 1),
		"param order":       "$argon2id$v=19$t=2,m=19456,p=1$" + salt + "$" + key,
		"extra param":       "$argon2id$v=19$m=19456,t=2,p=1,keyid=abc$" + salt + "$" + key,
		"missing param":     "$argon2id$v=19$m=19456,t=2$" + salt + "$" + key,
		"padded salt":       "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "==$" + key,
		"url base64":        "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + strings.Repeat("_", 43),
		"short salt":        "$argon2id$v=19$m=19456,t=2,p=1$AAAA$" + key,
		"short key":         "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$AAAAAAAA",
		"huge key":          "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + strings.Repeat("A", 200),
		"no key":            "$argon2id$v=19$m=19456,t=2,p=1$" + salt,
		"trailing part":     ok + "$x",
		"bcrypt 2x":         "$2x$" + string(bc[4:]),
		"bcrypt short":      string(bc[:59]),
		"bcrypt bad char":   string(bc[:59]) + "!",
		"bcrypt cost 31":    "$2a$31$" + string(bc[7:]),
		"bcrypt cost 15":    "$2a$15$" + string(bc[7:]),
	}
	for name, hash := range cases {
		t.Run(name, func(t *testing.T) {
			before := hashed.Load()
			ok, rehash, err := h.Verify(ctx, hash, "pw")
			assert.ErrorIs(t, err, identity.ErrUnknownHash)
			assert.False(t, ok)
			assert.False(t, rehash)
			assert.Equal(t, before, hashed.Load(), "rejected without hashing")
		})
	}
}

// HasherOptions.Running hears every change of the number of hashes
// running, in order: up when a hash takes its slot, down when it gives it
// back, never above the slots, and back at zero when all are done.
func TestHasher_Running(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	h := identity.NewHasher(&identity.HasherOptions{MaxConcurrent: 2, Running: func(n int) {
		mu.Lock()
		seen = append(seen, n)
		mu.Unlock()
	}})
	hash, err := h.Hash(context.Background(), "pw")
	require.NoError(t, err)
	require.Equal(t, []int{1, 0}, seen, "one hash")

	seen = nil
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			ok, _, err := h.Verify(context.Background(), hash, "pw")
			assert.NoError(t, err)
			assert.True(t, ok)
		})
	}
	wg.Wait()
	require.Len(t, seen, 10, "each of five hashes: up and down")
	prev := 0
	for i, n := range seen {
		require.Truef(t, n == prev+1 || n == prev-1, "call %d: %d after %d (%v)", i, n, prev, seen)
		require.LessOrEqualf(t, n, 2, "call %d: more running than slots (%v)", i, seen)
		prev = n
	}
	require.Zero(t, prev, "none running at the end")

	// A call that ends while waiting for a slot never ran.
	release, err := h.HoldSlots(context.Background())
	require.NoError(t, err)
	seen = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.Hash(ctx, "pw")
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, seen)
	release()
}

func TestHasher_ConcurrencyBound(t *testing.T) {
	h := identity.NewHasher(&identity.HasherOptions{MaxConcurrent: 2})
	hash, err := h.Hash(context.Background(), "pw")
	require.NoError(t, err)

	release, err := h.HoldSlots(context.Background())
	require.NoError(t, err)

	// Every slot is taken: calls wait, and give up with their context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = h.Hash(ctx, "pw")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	_, _, err = h.Verify(ctx, hash, "pw")
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Waiting calls proceed once slots are free.
	var done atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := h.Verify(context.Background(), hash, "pw")
			if err == nil && ok {
				done.Add(1)
			}
		}()
	}
	time.Sleep(30 * time.Millisecond)
	assert.Zero(t, done.Load(), "no verification runs while the slots are held")
	release()
	wg.Wait()
	assert.EqualValues(t, 4, done.Load())

	// A cancelled context fails at once even with free slots.
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	_, _, err = h.Verify(cctx, hash, "pw")
	assert.True(t, errors.Is(err, context.Canceled))
}

// By default a Hasher runs as many hashes at once as fit in
// DefaultHashMemoryBudget, and no more than there are processors.
func TestHasher_DefaultConcurrency(t *testing.T) {
	fit := identity.DefaultHashMemoryBudget / (identity.ArgonMemory << 10)
	require.Equal(t, 6, fit, "hashes of 19 MiB in the default budget")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, want int }{{1, 1}, {2, 2}, {4, 4}, {6, 6}, {16, 6}} {
		runtime.GOMAXPROCS(c.procs)
		require.Equalf(t, c.want, identity.NewHasher(nil).Slots(), "GOMAXPROCS %d", c.procs)
		require.Equalf(t, c.want, identity.HasherOptions{}.Concurrency(), "Concurrency, GOMAXPROCS %d", c.procs)
		require.Equalf(t, int64(c.want)*19<<20, identity.HasherOptions{}.Memory(), "Memory, GOMAXPROCS %d", c.procs)
	}
}

// HasherOptions.Memory is what MaxConcurrent hashes of 19 MiB hold, and
// Concurrency is the number of slots NewHasher makes.
func TestHasherOptions_MemoryAndConcurrency(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		o := identity.HasherOptions{MaxConcurrent: n}
		require.Equal(t, n, o.Concurrency())
		require.Equal(t, n, identity.NewHasher(&o).Slots())
		require.Equal(t, int64(n)*19<<20, o.Memory())
	}
}
