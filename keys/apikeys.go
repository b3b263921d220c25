package keys

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/paginate"
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

// APIKeys creates, lists, rolls and revokes a project's permanent API keys.
// A key's token is a JWT minted by the Keyring with the key's id as subject,
// its scopes as the scope claim and its expiry, if it has one, as exp; it
// is returned once, by Create, CreateKey or Roll, and never stored. The key
// works until it expires, is revoked (at once, or at the end of a roll's
// overlap) or the signing key that signed it is retired.
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
// space) in the project, without scopes or expiry, and returns its record
// as stored and its token: CreateKey with only a name.
func (a *APIKeys) Create(ctx context.Context, projectID, name string) (store.APIKey, string, error) {
	return a.CreateKey(ctx, projectID, NewKey{Name: name})
}

// NewKey describes an API key to create.
type NewKey struct {
	// Name labels the key; it is trimmed of surrounding white space.
	Name string
	// Scopes restrict what the key may do (store.CheckScopes); none
	// lets it do everything a key may do.
	Scopes []string
	// ExpiresIn, when not zero, gives the key an expiry that long after
	// its creation (whole seconds; at least one); zero makes it permanent.
	ExpiresIn time.Duration
}

// CreateKey makes a new API key in the project as nk describes and
// returns its record as stored and its token, which carries the scopes as
// its scope claim and the expiry as its exp. The record names the actor of
// ctx (package audit) as its creator and the signing key that signed the
// token. The token is shown to the user once and cannot be recovered. A
// name that store.CheckName refuses gives an error matching
// [ErrInvalidName], bad scopes one matching [ErrInvalidScope], a bad expiry
// one matching [ErrInvalidDuration]: nothing is created then. An unknown
// project gives one matching store.ErrNotFound.
func (a *APIKeys) CreateKey(ctx context.Context, projectID string, nk NewKey) (store.APIKey, string, error) {
	name := strings.TrimSpace(nk.Name)
	if err := store.CheckName("API key name", name); err != nil {
		return store.APIKey{}, "", fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	if err := store.CheckScopes(nk.Scopes); err != nil {
		return store.APIKey{}, "", fmt.Errorf("%w: %w", ErrInvalidScope, err)
	}
	if nk.ExpiresIn < 0 || nk.ExpiresIn > 0 && nk.ExpiresIn < time.Second {
		return store.APIKey{}, "", fmt.Errorf("%w: an expiry must be at least a second", ErrInvalidDuration)
	}
	now := a.now()
	rec := store.APIKey{
		ID:        store.NewID(store.PrefixAPIKey),
		ProjectID: projectID,
		Name:      name,
		CreatedBy: audit.FromContext(ctx).ID,
		CreatedAt: store.Truncate(now),
		Scopes:    slices.Clone(nk.Scopes),
	}
	if nk.ExpiresIn > 0 {
		rec.ExpiresAt = expiryAt(now, nk.ExpiresIn)
	}
	// Mint first: a project without an active key gets no record.
	token, err := a.mint(ctx, &rec)
	if err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	if err := a.st.CreateAPIKey(ctx, rec); err != nil {
		return store.APIKey{}, "", fmt.Errorf("keys: create API key: %w", err)
	}
	a.audit.Record(ctx, projectID, store.ActionAPIKeyCreate, rec.ID)
	return rec, token, nil
}

// expiryAt is the expiry of a key made at now to last d: whole seconds, as
// the token's exp says it.
func expiryAt(now time.Time, d time.Duration) time.Time {
	return now.Add(d).Truncate(time.Second).UTC()
}

// mint mints the token of rec and records in it the signing key that
// signed it.
func (a *APIKeys) mint(ctx context.Context, rec *store.APIKey) (string, error) {
	token, kid, err := a.kr.MintScopedAPIKeyToken(ctx, rec.ProjectID, rec.ID, rec.Scopes, rec.ExpiresAt)
	if err != nil {
		return "", err
	}
	rec.SigningKeyID = kid
	return token, nil
}

// DefaultOverlap is how long the old key of a roll keeps working when the
// caller names no overlap: a day, to hand the new key to every service.
const DefaultOverlap = 24 * time.Hour

// Roll replaces the project's key id by a new key with the same name and
// scopes (and, for a key with an expiry, the same lifetime from now), and
// schedules the old key's revocation overlap from now (zero revokes it at
// once): both keys work during the overlap; from its end every Verifier
// refuses the old one and the revocation feed lists it, at that time. It
// returns the old key as it is after the roll, the new key's record and
// its token (shown once).
//
// Of concurrent rolls of one key, on any instances, exactly one succeeds;
// the others get an error matching store.ErrConflict, as does a key rolled
// before. A revoked key gives one matching store.ErrRevoked, an expired
// one store.ErrExpired, an unknown one store.ErrNotFound, a negative
// overlap [ErrInvalidDuration]; nothing changes then.
func (a *APIKeys) Roll(ctx context.Context, projectID, id string, overlap time.Duration) (old, next store.APIKey, token string, err error) {
	if overlap < 0 {
		return store.APIKey{}, store.APIKey{}, "", fmt.Errorf("%w: a negative overlap", ErrInvalidDuration)
	}
	cur, err := a.st.GetAPIKey(ctx, projectID, id)
	if err != nil {
		return store.APIKey{}, store.APIKey{}, "", fmt.Errorf("keys: roll API key: %w", err)
	}
	now := a.now()
	next = store.APIKey{
		ID:        store.NewID(store.PrefixAPIKey),
		ProjectID: projectID,
		Name:      cur.Name,
		CreatedBy: audit.FromContext(ctx).ID,
		CreatedAt: store.Truncate(now),
		Scopes:    cur.Scopes,
	}
	if !cur.ExpiresAt.IsZero() {
		// The old key's lifetime in whole seconds (its token's exp - iat).
		lifetime := cur.ExpiresAt.Sub(cur.CreatedAt.Truncate(time.Second))
		next.ExpiresAt = expiryAt(now, max(lifetime, time.Second))
	}
	if err := store.CheckRollable(cur, next, now); err != nil {
		return store.APIKey{}, store.APIKey{}, "", fmt.Errorf("keys: roll API key: %w", err)
	}
	if token, err = a.mint(ctx, &next); err != nil {
		return store.APIKey{}, store.APIKey{}, "", fmt.Errorf("keys: roll API key: %w", err)
	}
	old, err = a.st.RollAPIKey(ctx, projectID, id, next, store.Truncate(now.Add(overlap)))
	if err != nil {
		return store.APIKey{}, store.APIKey{}, "", fmt.Errorf("keys: roll API key: %w", err)
	}
	next.RolledFrom = id
	a.audit.Record(ctx, projectID, store.ActionAPIKeyCreate, next.ID)
	a.audit.Record(ctx, projectID, store.ActionAPIKeyRoll, id)
	if overlap == 0 {
		a.revocations.Add(ctx, telemetry.KindAPIKey)
	}
	return old, next, token, nil
}

// ListPage returns a page of the project's keys whose name starts with
// namePrefix (every key when it is empty), revoked ones included, oldest
// first (store.APIKeyStore.ListAPIKeysPage).
func (a *APIKeys) ListPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error) {
	page, err := a.st.ListAPIKeysPage(ctx, projectID, namePrefix, req)
	if err != nil {
		return paginate.Page[store.APIKey]{}, fmt.Errorf("keys: list API keys: %w", err)
	}
	return page, nil
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

// ActiveSignedBy returns how many of the project's API keys are neither
// revoked nor expired now (a rolled key counts until its overlap ends) and
// were signed by the signing key kid: the keys that retiring kid would
// stop. Keys created before their signing key was recorded are not
// counted.
func (a *APIKeys) ActiveSignedBy(ctx context.Context, projectID, kid string) (int, error) {
	ks, err := a.List(ctx, projectID)
	if err != nil {
		return 0, err
	}
	n, now := 0, a.now()
	for _, k := range ks {
		if k.ValidAt(now) && k.SigningKeyID == kid {
			n++
		}
	}
	return n, nil
}
