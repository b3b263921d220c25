package latchkey

import (
	"context"
	crand "crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// The administrative operations below are what the example server's command
// line and the console do. They act on the store directly, so they may run in
// another process than the servers: every server sees their effect on its
// next request.

// CreateProject creates project id with its first signing key. It returns
// an error matching store.ErrInvalid for an id that is not a slug and
// store.ErrConflict for an existing project.
func (l *Latchkey) CreateProject(ctx context.Context, id string) (store.Project, error) {
	p := store.Project{ID: id, CreatedAt: l.now()}
	if err := l.st.CreateProject(ctx, p); err != nil {
		return store.Project{}, fmt.Errorf("latchkey: creating project %q: %w", id, err)
	}
	if _, err := l.keyring.Rotate(ctx, id); err != nil {
		return store.Project{}, fmt.Errorf("latchkey: creating the signing key of project %q: %w", id, err)
	}
	return l.st.GetProject(ctx, id)
}

// EnsureProject makes sure project id exists and has an active signing key,
// creating what is missing. It is safe to run concurrently from several
// processes: at worst the project gets two signing keys, the newer active.
func (l *Latchkey) EnsureProject(ctx context.Context, id string) error {
	err := l.st.CreateProject(ctx, store.Project{ID: id, CreatedAt: l.now()})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("latchkey: creating project %q: %w", id, err)
	}
	_, err = l.st.ActiveSigningKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		_, err = l.keyring.Rotate(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("latchkey: signing key of project %q: %w", id, err)
	}
	return nil
}

// CreateUser creates a user of the project with the given email, password
// (hashed with argon2id) and tags. It returns an error matching
// store.ErrInvalid for an empty email or password, store.ErrNotFound for an
// unknown project and store.ErrConflict when the project has a user with
// that email, compared case-insensitively.
func (l *Latchkey) CreateUser(ctx context.Context, project, email, password string, tags []string) (store.User, error) {
	email = strings.TrimSpace(email)
	if email == "" || password == "" {
		return store.User{}, fmt.Errorf("latchkey: a user needs an email and a password: %w", store.ErrInvalid)
	}
	hash, err := l.hasher.Hash(ctx, password)
	if err != nil {
		return store.User{}, fmt.Errorf("latchkey: hashing the password: %w", err)
	}
	if tags == nil {
		tags = []string{}
	}
	u := store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    project,
		Email:        email,
		PasswordHash: hash,
		Tags:         tags,
		CreatedAt:    l.now(),
	}
	if err := l.st.CreateUser(ctx, u); err != nil {
		return store.User{}, fmt.Errorf("latchkey: creating user: %w", err)
	}
	return u, nil
}

// CreateContact creates a contact of the project and returns it as stored.
// It returns an error matching store.ErrInvalid for an empty name and
// store.ErrNotFound for an unknown project.
func (l *Latchkey) CreateContact(ctx context.Context, project, name string) (store.Contact, error) {
	if name == "" {
		return store.Contact{}, fmt.Errorf("latchkey: a contact needs a name: %w", store.ErrInvalid)
	}
	c, err := l.st.CreateContact(ctx, store.Contact{
		ID: store.NewID(store.PrefixContact), ProjectID: project, Name: name, CreatedAt: l.now(),
	})
	if err != nil {
		return store.Contact{}, fmt.Errorf("latchkey: creating contact: %w", err)
	}
	return c, nil
}

// SeedBatch is how many contacts SeedContacts writes per transaction.
const SeedBatch = 10_000

// SeedContacts adds n contacts with generated names to the project, in
// atomic batches of SeedBatch (a failure keeps the batches written before
// it). progress, if not nil, is called after each batch with the number
// written so far. It returns an error matching store.ErrNotFound for an
// unknown project.
func (l *Latchkey) SeedContacts(ctx context.Context, project string, n int, progress func(done int)) error {
	if n < 0 {
		return fmt.Errorf("latchkey: cannot seed %d contacts: %w", n, store.ErrInvalid)
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	enc := base32.NewEncoding(idAlphabet).WithPadding(base32.NoPadding)
	batch := make([]store.Contact, 0, min(n, SeedBatch))
	for done := 0; done < n; {
		batch = batch[:0]
		now := l.now()
		for i := 0; i < SeedBatch && done+i < n; i++ {
			batch = append(batch, store.Contact{
				ID:        seedID(enc, now),
				ProjectID: project,
				Name:      firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))],
				CreatedAt: now,
			})
		}
		// Ids in ascending order land at the end of the id index instead
		// of all over it, so a batch writes few pages whatever the size of
		// the table.
		slices.SortFunc(batch, func(a, b store.Contact) int { return strings.Compare(a.ID, b.ID) })
		if err := l.st.CreateContacts(ctx, project, batch); err != nil {
			return fmt.Errorf("latchkey: seeding contacts (%d of %d written): %w", done, n, err)
		}
		done += len(batch)
		if progress != nil {
			progress(done)
		}
	}
	return nil
}

// idAlphabet is the alphabet of store.NewID's random part.
const idAlphabet = "0123456789abcdefghijklmnopqrstuv"

// seedID returns a contact id of store.NewID's shape ("ct_" and 26
// characters of 128 bits) whose first 48 bits are the milliseconds of t and
// the other 80 random, so that ids of later batches sort after earlier ones.
// Ids stay unique and unguessable; like created_at they show when the
// contact was made.
func seedID(enc *base32.Encoding, t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	_, _ = crand.Read(b[6:])
	return store.PrefixContact + "_" + enc.EncodeToString(b[:])
}

var firstNames = []string{
	"Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances",
	"Grace", "Hedy", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia",
	"Rob", "Shafi", "Sophie", "Tim", "Tony", "Vint", "Whitfield", "Yukihiro",
}

var lastNames = []string{
	"Allen", "Backus", "Berners-Lee", "Cerf", "Diffie", "Dijkstra", "Goldwasser",
	"Hamilton", "Hoare", "Hopper", "Knuth", "Lamarr", "Lamport", "Liskov",
	"Lovelace", "Matsumoto", "McCarthy", "Perlman", "Pike", "Ritchie", "Shannon",
	"Thompson", "Turing", "Wilson", "Wirth",
}

// CreateAPIKey creates a permanent API key of the project and returns its
// record and its token. The token is shown this once: only the record is
// stored.
func (l *Latchkey) CreateAPIKey(ctx context.Context, project, name string) (store.APIKey, string, error) {
	k, token, err := l.apiKeys.Create(ctx, project, name)
	if err != nil {
		return store.APIKey{}, "", fmt.Errorf("latchkey: creating API key: %w", err)
	}
	return k, token, nil
}

// ListAPIKeys returns the records of the project's API keys, revoked ones
// included, oldest first.
func (l *Latchkey) ListAPIKeys(ctx context.Context, project string) ([]store.APIKey, error) {
	ks, err := l.apiKeys.List(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("latchkey: listing API keys: %w", err)
	}
	return ks, nil
}

// RevokeAPIKey revokes the project's API key id. From the next request on,
// every server sharing the store rejects its token. It returns an error
// matching store.ErrNotFound for an unknown key.
func (l *Latchkey) RevokeAPIKey(ctx context.Context, project, id string) error {
	if err := l.apiKeys.Revoke(ctx, project, id); err != nil {
		return fmt.Errorf("latchkey: revoking API key: %w", err)
	}
	return nil
}
