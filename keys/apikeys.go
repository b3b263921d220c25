package keys

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/store"
)

// MaxAPIKeyNameLen is the longest API key name, in characters.
const MaxAPIKeyNameLen = 100

// APIKeysOptions tunes [APIKeys]. The zero value (or a nil pointer) is valid.
type APIKeysOptions struct {
	// Now returns the current time, used for creation and revocation
	// times. Default: time.Now.
	Now func() time.Time
}

// APIKeys creates, lists and revokes a project's permanent API keys. A
// key's token is a JWT minted by the Keyring with the key's id as subject
// and no expiry; it is returned once, by Create, and never stored. The key
// works until it is revoked or the signing key that signed it is retired.
// APIKeys is safe for concurrent use.
type APIKeys struct {
	st  store.APIKeyStore
	kr  *Keyring
	now func() time.Time
}

// NewAPIKeys returns an APIKeys keeping records in st and minting with kr.
// It panics if st or kr is nil.
func NewAPIKeys(st store.APIKeyStore, kr *Keyring, opts *APIKeysOptions) *APIKeys {
	if st == nil || kr == nil {
		panic("keys: NewAPIKeys with a nil store or keyring")
	}
	now := time.Now
	if opts != nil && opts.Now != nil {
		now = opts.Now
	}
	return &APIKeys{st: st, kr: kr, now: now}
}

// Create makes a new API key named name (trimmed of surrounding white
// space) in the project and returns its record as stored and its token. The
// token is shown to the user once and cannot be recovered. A name that is
// empty, longer than MaxAPIKeyNameLen characters, not UTF-8 or holding
// control characters gives an error matching [ErrInvalidName]; an unknown
// project one matching store.ErrNotFound.
func (a *APIKeys) Create(ctx context.Context, projectID, name string) (store.APIKey, string, error) {
	name, err := cleanName(name)
	if err != nil {
		return store.APIKey{}, "", err
	}
	id := store.NewID(store.PrefixAPIKey)
	// Mint first: a project without an active key gets no record.
	token, err := a.kr.MintAPIKeyToken(ctx, projectID, id)
	if err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	rec := store.APIKey{ID: id, ProjectID: projectID, Name: name, CreatedAt: store.Truncate(a.now())}
	if err := a.st.CreateAPIKey(ctx, rec); err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	return rec, token, nil
}

// List returns the project's keys, revoked ones included, oldest first.
func (a *APIKeys) List(ctx context.Context, projectID string) ([]store.APIKey, error) {
	ks, err := a.st.ListAPIKeys(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("keys: list API keys: %w", err)
	}
	return ks, nil
}

// Revoke revokes the project's key id now. Every Verifier on the same
// store refuses its token from the next request on. Revoking a revoked key
// succeeds and keeps the first time; an unknown id gives an error matching
// store.ErrNotFound.
func (a *APIKeys) Revoke(ctx context.Context, projectID, id string) error {
	if err := a.st.RevokeAPIKey(ctx, projectID, id, a.now()); err != nil {
		return fmt.Errorf("keys: revoke API key: %w", err)
	}
	return nil
}

// cleanName trims name and checks it.
func cleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fmt.Errorf("%w: the name is empty", ErrInvalidName)
	case !utf8.ValidString(name):
		return "", fmt.Errorf("%w: the name is not valid UTF-8", ErrInvalidName)
	case utf8.RuneCountInString(name) > MaxAPIKeyNameLen:
		return "", fmt.Errorf("%w: the name is longer than %d characters", ErrInvalidName, MaxAPIKeyNameLen)
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", fmt.Errorf("%w: the name holds control characters", ErrInvalidName)
	}
	return name, nil
}
