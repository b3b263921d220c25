package keys

import (
	"context"

	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/store"
)

// APIKeysOptions tunes [APIKeys]. The zero value (or a nil pointer) is valid.
type APIKeysOptions struct {
	// Now returns the current time, used for creation and revocation
	// times. Default: time.Now.
	Now func() time.Time
	// Audit records key creations and revocations, by the actor of the
	// request's context (package audit). Nil records nothing.
	Audit *audit.Log
	// MeterProvider receives the latchkey.revocations counter
	// (kind=api_key). Nil means the global provider.
	MeterProvider metric.MeterProvider
}

// APIKeys creates, lists and revokes a project's permanent API keys. A
// key's token is a JWT minted by the Keyring with the key's id as subject
// and no expiry; it is returned once, by Create, and never stored. The key
// works until it is revoked or the signing key that signed it is retired.
// APIKeys is safe for concurrent use.
type APIKeys struct {
	st    store.APIKeyStore
	kr    *Keyring
	now   func() time.Time
	audit *audit.Log
	// revocations counts revoked keys.
	revocations telemetry.Counter
}

// NewAPIKeys returns an APIKeys keeping records in st and minting with kr.
// It panics if st or kr is nil.
func NewAPIKeys(st store.APIKeyStore, kr *Keyring, opts *APIKeysOptions) *APIKeys {
	if st == nil || kr == nil {
		panic("keys: NewAPIKeys with a nil store or keyring")
	}
	var o APIKeysOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &APIKeys{st: st, kr: kr, now: o.Now, audit: o.Audit,
		revocations: telemetry.NewRevocations(telemetry.Meter(o.MeterProvider))}
}

// Create makes a new API key named name (trimmed of surrounding white
// space) in the project and returns its record as stored and its token. The
// record names the actor of ctx (package audit) as its creator and the
// signing key that signed the token. The token is shown to the user once
// and cannot be recovered. A name that store.CheckName refuses gives an
// error matching [ErrInvalidName]; an unknown project one matching
// store.ErrNotFound.
func (a *APIKeys) Create(ctx context.Context, projectID, name string) (store.APIKey, string, error) {
	name = strings.TrimSpace(name)
	if err := store.CheckName("API key name", name); err != nil {
		return store.APIKey{}, "", fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	id := store.NewID(store.PrefixAPIKey)
	// Mint first: a project without an active key gets no record.
	token, kid, err := a.kr.MintAPIKeyToken(ctx, projectID, id)
	if err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	rec := store.APIKey{
		ID:           id,
		ProjectID:    projectID,
		Name:         name,
		CreatedBy:    audit.FromContext(ctx).ID,
		SigningKeyID: kid,
		CreatedAt:    store.Truncate(a.now()),
	}
	if err := a.st.CreateAPIKey(ctx, rec); err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	a.audit.Record(ctx, projectID, store.ActionAPIKeyCreate, id)
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
// store refuses its token from the next request on, and the revocation
// feed lists it. Revoking a revoked key succeeds and keeps the first time;
// an unknown id gives an error matching store.ErrNotFound.
func (a *APIKeys) Revoke(ctx context.Context, projectID, id string) error {
	if err := a.st.RevokeAPIKey(ctx, projectID, id, a.now()); err != nil {
		return fmt.Errorf("keys: revoke API key: %w", err)
	}
	a.audit.Record(ctx, projectID, store.ActionAPIKeyRevoke, id)
	a.revocations.Add(ctx, telemetry.KindAPIKey)
	return nil
}

// ActiveSignedBy returns how many of the project's API keys are not revoked
// and were signed by the signing key kid: the keys that retiring kid would
// stop. Keys created before their signing key was recorded are not
// counted.
func (a *APIKeys) ActiveSignedBy(ctx context.Context, projectID, kid string) (int, error) {
	ks, err := a.List(ctx, projectID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range ks {
		if !k.Revoked() && k.SigningKeyID == kid {
			n++
		}
	}
	return n, nil
}
