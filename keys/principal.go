package keys

import (
	"context"
	"slices"
)

// Kind says how a request was authenticated.
type Kind int

// The kinds of principal. The zero Kind is none of them.
const (
	// KindUser is a user authenticated by a login token (subject "usr_...").
	KindUser Kind = iota + 1
	// KindAPIKey is a backend authenticated by a permanent API key (subject
	// "key_...").
	KindAPIKey
)

// String returns "user", "api_key", or "unknown".
func (k Kind) String() string {
	switch k {
	case KindUser:
		return "user"
	case KindAPIKey:
		return "api_key"
	}
	return "unknown"
}

// Principal is who a verified token speaks for.
type Principal struct {
	// ProjectID is the project the token was verified for; it equals the
	// token's audience and the request's project.
	ProjectID string
	// Subject is the token's subject: a user id ("usr_...") for KindUser,
	// an API key id ("key_...") for KindAPIKey.
	Subject string
	// Kind says whether Subject is a user or an API key.
	Kind Kind
	// SessionID is the session a login token belongs to ("rf_..."), or ""
	// for API keys.
	SessionID string
	// Tags are the user's tags as they were when the login token was
	// minted (tags changed later show in the next login token). They are
	// never nil, and empty for API keys. The slice belongs to the caller.
	Tags []string
	// Scopes are the scopes of an API key created with some (the token's
	// scope claim); nil for a key without scopes, which may do everything
	// a key may do, and for users. Check them with [Principal.HasScope]
	// or [RequireScope]. The slice belongs to the caller.
	Scopes []string
}

// HasScope reports whether p may do what scope names: p is not restricted
// by scopes (a user, or an API key created without scopes), or its scopes
// include scope.
func (p Principal) HasScope(scope string) bool {
	return len(p.Scopes) == 0 || slices.Contains(p.Scopes, scope)
}

// HasTag reports whether p carries tag.
func (p Principal) HasTag(tag string) bool {
	for _, t := range p.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// authKey is the context key of a verified request's *requestAuth.
type authKey struct{}

// requestAuth is what a verified request's context carries: its principal
// and, after BeginCheck, its token's check while it is pending.
// One context value holds both, so a request gains one context, not two.
type requestAuth struct {
	principal Principal
	pending   *Check // nil when the token was checked before the handler ran
}

// PrincipalFromContext returns the principal [Verifier.Middleware] (or
// [Check.Context]) stored in ctx, and whether there was one.
func PrincipalFromContext(ctx context.Context) (Principal, bool) {
	a, ok := ctx.Value(authKey{}).(*requestAuth)
	if !ok {
		return Principal{}, false
	}
	return a.principal, true
}

// contextWithAuth returns ctx carrying a.
func contextWithAuth(ctx context.Context, a *requestAuth) context.Context {
	return context.WithValue(ctx, authKey{}, a)
}
