package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/latchkey-dev/latchkey/internal/telemetry"
)

// The argon2id parameters of every hash made by [Hasher.Hash], fixed by the
// wire contract.
const (
	// ArgonMemory is the memory cost in KiB (19 MiB).
	ArgonMemory = 19456
	// ArgonTime is the number of passes.
	ArgonTime = 2
	// ArgonThreads is the degree of parallelism.
	ArgonThreads = 1
	// ArgonSaltLen is the length of the random salt in bytes.
	ArgonSaltLen = 16
	// ArgonKeyLen is the length of the derived key in bytes.
	ArgonKeyLen = 32
)

// Bounds on the parameters of a stored hash that Verify accepts. They keep a
// stored (possibly tampered) hash from making one verification allocate
// gigabytes or run for minutes.
const (
	// MaxArgonMemory is the largest argon2id memory cost accepted, in KiB
	// (64 MiB, RFC 9106's second recommended option): with
	// HasherOptions.MaxConcurrent at most 6 by default, verifications never
	// hold more than 384 MiB even if every stored hash asked for the most.
	MaxArgonMemory = 64 << 10
	// MaxArgonTime is the largest argon2id pass count accepted.
	MaxArgonTime = 10
	// MaxArgonThreads is the largest argon2id parallelism accepted.
	MaxArgonThreads = 16
	// MaxBcryptCost is the largest bcrypt cost accepted (about one second
	// per verification on current hardware).
	MaxBcryptCost = 14
)

const (
	minArgonSaltLen = 8
	maxArgonSaltLen = 64
	minArgonKeyLen  = 16
	maxArgonKeyLen  = 64
	// bcryptMaxPassword is the number of bytes of a password bcrypt reads;
	// it silently ignores the rest.
	bcryptMaxPassword = 72
)

// MaxPasswordLen is the longest password, in bytes, that Hash accepts and
// that can ever match. Longer passwords are refused without hashing.
const MaxPasswordLen = 1024

var (
	// ErrUnknownHash is returned by Verify for a stored hash that is not a
	// well-formed argon2id PHC string or bcrypt hash, or whose parameters
	// are out of bounds.
	ErrUnknownHash = errors.New("identity: unknown or malformed password hash")
	// ErrPasswordTooLong is returned by Hash for a password longer than
	// MaxPasswordLen bytes.
	ErrPasswordTooLong = errors.New("identity: password too long")
)

var b64 = base64.RawStdEncoding.Strict()

// DefaultHashMemoryBudget is the memory the hashes running at once may
// hold by default: HasherOptions.MaxConcurrent defaults to the number of
// argon2id hashes (ArgonMemory each) that fit in it.
const DefaultHashMemoryBudget = 128 << 20

// HasherOptions configure a Hasher. The zero value is ready to use.
type HasherOptions struct {
	// MaxConcurrent bounds how many hashes (argon2id or bcrypt, made or
	// verified) run at once; further calls wait for a slot or for their
	// context to end. Each argon2id hash holds 19 MiB while it runs, so this
	// bounds the memory a login flood can take. Zero means as many as fit
	// in DefaultHashMemoryBudget (6 hashes, 114 MiB), but no more than
	// runtime.GOMAXPROCS(0): a hash keeps a processor busy for its whole
	// run, so more at once than there are processors would hold more
	// memory without hashing any faster. (A stored hash with a larger
	// memory cost, up to MaxArgonMemory, holds more while it is verified.)
	//
	// A process with a soft memory limit (debug.SetMemoryLimit, GOMEMLIMIT)
	// should leave the hashes room above what the rest of the process
	// needs, better twice Memory: the hashes running and the memory of
	// those just finished, which stays in the heap until the next
	// collection. With less room, nearly every hash starts a collection
	// and the runtime hands the hashes' memory back to the system only to
	// fault it in again on the next hash: a login then costs a good part
	// of a hash more CPU than the hash itself. Running tells a process
	// when that room is needed.
	MaxConcurrent int
	// Running, if not nil, is called with the number of hashes running
	// each time it changes: when a hash takes its slot and when it gives it
	// back. Calls are made one at a time, in order, on the goroutine of
	// the hash, which waits for them; Running must not call the Hasher, and
	// should return quickly. The example server uses it to raise
	// its soft memory limit by twice Memory while hashes run, and to
	// lower it again once none has run for a second (lowering it in each
	// gap between two hashes would hand their memory back all the same).
	Running func(n int)
	// MeterProvider receives the latchkey.hash.queue_wait histogram: how
	// long each hash waited for a slot, in seconds. Nil means the global
	// provider (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

// Memory returns the most memory, in bytes, that the argon2id hashes of
// Hasher.Hash running at once hold with these options: MaxConcurrent (or
// its default, as NewHasher applies it) hashes of ArgonMemory KiB each.
// Verifying a stored hash with a larger memory cost holds more while it
// runs (at most MaxArgonMemory KiB a hash).
func (o HasherOptions) Memory() int64 {
	return int64(o.Concurrency()) * ArgonMemory << 10
}

// Concurrency returns how many hashes a Hasher made with these options runs
// at once: MaxConcurrent, or its default when MaxConcurrent is zero or
// less.
func (o HasherOptions) Concurrency() int {
	if o.MaxConcurrent > 0 {
		return o.MaxConcurrent
	}
	return defaultMaxConcurrent()
}

// defaultMaxConcurrent is the default of HasherOptions.MaxConcurrent.
func defaultMaxConcurrent() int {
	return max(min(DefaultHashMemoryBudget/(ArgonMemory<<10), runtime.GOMAXPROCS(0)), 1)
}

// Hasher hashes and verifies passwords: argon2id with the parameters of the
// wire contract, stored as PHC strings, and bcrypt hashes of imported users.
// It is safe for concurrent use.
type Hasher struct {
	slots chan struct{}
	wait  metric.Float64Histogram // latchkey.hash.queue_wait

	running func(n int) // HasherOptions.Running; nil for none
	mu      sync.Mutex  // orders the calls of running
	n       int         // hashes running, guarded by mu
}

// NewHasher returns a Hasher. A nil opts means the defaults.
func NewHasher(opts *HasherOptions) *Hasher {
	var o HasherOptions
	if opts != nil {
		o = *opts
	}
	n := o.Concurrency()
	wait, err := telemetry.Meter(o.MeterProvider).Float64Histogram("latchkey.hash.queue_wait",
		metric.WithDescription("How long each password hash waited for a hashing slot (HasherOptions.MaxConcurrent), including the ones whose request ended first."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		wait = noop.Float64Histogram{}
	}
	return &Hasher{slots: make(chan struct{}, n), wait: wait, running: o.Running}
}

// acquire takes a hashing slot, or returns ctx's error if ctx ends first.
// With the slot held it calls admit, if not nil: an error from admit gives
// the slot back and is returned as it is, so nothing is hashed.
func (h *Hasher) acquire(ctx context.Context, admit func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case h.slots <- struct{}{}:
		h.wait.Record(ctx, 0)
	default:
		start := time.Now()
		select {
		case h.slots <- struct{}{}:
			h.wait.Record(ctx, time.Since(start).Seconds())
		case <-ctx.Done():
			h.wait.Record(ctx, time.Since(start).Seconds())
			return ctx.Err()
		}
	}
	h.count(1)
	if admit != nil {
		if err := admit(); err != nil {
			h.release()
			return err
		}
	}
	return nil
}

func (h *Hasher) release() {
	h.count(-1)
	<-h.slots
}

// count adds d to the number of hashes running and tells
// HasherOptions.Running.
func (h *Hasher) count(d int) {
	if h.running == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n += d
	h.running(h.n)
}

// busy reports whether every hashing slot is taken (at the moment of the
// call: a slot may be taken or given back just after).
func (h *Hasher) busy() bool { return len(h.slots) == cap(h.slots) }

// Hash returns the argon2id PHC string of password:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>, salt and key in standard
// base64 without padding. It returns ErrPasswordTooLong for a password over
// MaxPasswordLen bytes, and ctx's error if ctx ends while waiting for a
// hashing slot.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if len(password) > MaxPasswordLen {
		return "", ErrPasswordTooLong
	}
	salt := make([]byte, ArgonSaltLen)
	_, _ = rand.Read(salt) // crypto/rand.Read never returns an error.
	if err := h.acquire(ctx, nil); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, ArgonTime, ArgonMemory, ArgonThreads, ArgonKeyLen)
	h.release()
	return formatPHC(salt, key), nil
}

// formatPHC returns the argon2id PHC string of a key derived with Hash's
// parameters from salt.
func formatPHC(salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, ArgonMemory, ArgonTime, ArgonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decoyHash returns an argon2id PHC string with Hash's parameters and a
// random salt and key. Verifying a password against it costs one hash, as
// against any stored hash, and no password matches it: that would take a
// password whose key is the random one (a chance of 2^-256).
func decoyHash() string {
	salt, key := make([]byte, ArgonSaltLen), make([]byte, ArgonKeyLen)
	_, _ = rand.Read(salt) // crypto/rand.Read never returns an error.
	_, _ = rand.Read(key)
	return formatPHC(salt, key)
}

// Verify reports whether password matches hash, an argon2id PHC string or a
// bcrypt hash ($2a$, $2b$ or $2y$), comparing in constant time.
// needsRehash reports that the password matched a hash that should be
// replaced by a fresh Hash of the password: every bcrypt hash, and every
// argon2id hash with a smaller memory cost, pass count, salt or key than
// Hash uses.
//
// A password longer than 72 bytes never matches a bcrypt hash (bcrypt would
// ignore the rest); it still costs one bcrypt computation, so the answer
// takes as long as any other. A password longer than MaxPasswordLen never
// matches anything.
//
// Verify returns ErrUnknownHash, without hashing, for a hash it cannot
// parse or whose parameters exceed the Max* bounds, and ctx's error if ctx
// ends while waiting for a hashing slot.
func (h *Hasher) Verify(ctx context.Context, hash, password string) (ok, needsRehash bool, err error) {
	return h.verify(ctx, hash, password, nil)
}

// verify is Verify, calling admit (if not nil) once it holds a hashing slot
// and before it hashes; an error from admit is returned as it is, with no
// hash computed. The Authenticator re-checks its throttle there, so that
// attempts queued behind a full hasher cannot all slip past the limit.
func (h *Hasher) verify(ctx context.Context, hash, password string, admit func() error) (ok, needsRehash bool, err error) {
	switch {
	case strings.HasPrefix(hash, "$argon2id$"):
		p, err := parsePHC(hash)
		if err != nil {
			return false, false, err
		}
		if err := h.acquire(ctx, admit); err != nil {
			return false, false, err
		}
		key := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
		h.release()
		ok = subtle.ConstantTimeCompare(key, p.key) == 1 && len(password) <= MaxPasswordLen
		weaker := p.memory < ArgonMemory || p.time < ArgonTime || len(p.salt) < ArgonSaltLen || len(p.key) < ArgonKeyLen
		return ok, ok && weaker, nil
	case isBcrypt(hash):
		cost, err := bcrypt.Cost([]byte(hash))
		if err != nil || cost > MaxBcryptCost {
			return false, false, ErrUnknownHash
		}
		pw := []byte(password)
		if len(pw) > bcryptMaxPassword {
			pw = pw[:bcryptMaxPassword]
		}
		if err := h.acquire(ctx, admit); err != nil {
			return false, false, err
		}
		err = bcrypt.CompareHashAndPassword([]byte(hash), pw)
		h.release()
		switch {
		case err == nil:
			ok = len(password) <= bcryptMaxPassword
		case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		default:
			return false, false, ErrUnknownHash
		}
		return ok, ok, nil
	}
	return false, false, ErrUnknownHash
}

// isBcrypt reports whether hash has the shape of a bcrypt hash of a version
// Verify accepts: $2a$, $2b$ or $2y$, a two-digit cost, and 53 characters
// of salt and digest.
func isBcrypt(hash string) bool {
	if len(hash) != 60 {
		return false
	}
	switch hash[:4] {
	case "$2a$", "$2b$", "$2y$":
	default:
		return false
	}
	if !isDigit(hash[4]) || !isDigit(hash[5]) || hash[6] != '$' {
		return false
	}
	for i := 7; i < len(hash); i++ {
		c := hash[i]
		if !(c == '.' || c == '/' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// phc is a parsed argon2id PHC string.
type phc struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// parsePHC parses $argon2id$v=19$m=M,t=T,p=P$<salt>$<key> strictly: version
// 19 only, the three parameters in that order with canonical decimal
// values within bounds, no optional parameters, and salt and key in
// standard base64 without padding, of bounded length.
func parsePHC(s string) (phc, error) {
	var p phc
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return p, ErrUnknownHash
	}
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return p, ErrUnknownHash
	}
	m, okM := phcParam(params[0], "m=", MaxArgonMemory)
	t, okT := phcParam(params[1], "t=", MaxArgonTime)
	th, okP := phcParam(params[2], "p=", MaxArgonThreads)
	if !okM || !okT || !okP || m < 8*th {
		return p, ErrUnknownHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < minArgonSaltLen || len(salt) > maxArgonSaltLen {
		return p, ErrUnknownHash
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < minArgonKeyLen || len(key) > maxArgonKeyLen {
		return p, ErrUnknownHash
	}
	return phc{memory: m, time: t, threads: uint8(th), salt: salt, key: key}, nil
}

// phcParam parses "name=N" where N is a canonical decimal (no sign, no
// leading zero) from 1 to limit.
func phcParam(s, name string, limit uint32) (uint32, bool) {
	v, ok := strings.CutPrefix(s, name)
	if !ok || v == "" || len(v) > 10 || v[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n < 1 || n > uint64(limit) {
		return 0, false
	}
	return uint32(n), true
}
