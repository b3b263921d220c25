package store

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/paginate"
)

// The argument checks every backend makes, written once. A backend calls the
// Check function of a method's arguments before it touches the database and
// returns its error (wrapped with the operation) unchanged in kind: every
// error of a Check function matches ErrInvalid, and its text says what is
// wrong without echoing the value.

// Limits on what a store accepts.
const (
	// MaxIDLen is the longest id, in bytes.
	MaxIDLen = 128
	// MaxEmailLen is the longest email address, in bytes (RFC 5321's path
	// limit less its brackets).
	MaxEmailLen = 254
	// MaxNameLen is the longest contact or API key name, in characters.
	MaxNameLen = 100
	// MaxTags is the most tags a user carries.
	MaxTags = 32
	// MaxTagLen is the longest tag, in characters.
	MaxTagLen = 64
	// MaxProjectIDLen is the longest project id, in bytes.
	MaxProjectIDLen = 63
	// MaxScopes is the most scopes an API key carries.
	MaxScopes = 32
	// MaxScopeLen is the longest scope name, in bytes.
	MaxScopeLen = 64
)

// ValidProjectID reports whether id is a project slug:
// [a-z0-9][a-z0-9-]{0,62}. Every store call checks its project id, so this
// is a loop over the bytes rather than a regular expression.
func ValidProjectID(id string) bool {
	if id == "" || len(id) > MaxProjectIDLen || id[0] == '-' {
		return false
	}
	for i := range len(id) {
		if c := id[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ArgError is the error of a Check function: an argument that is not
// acceptable. It matches ErrInvalid. Reason says what is wrong, in words fit
// for the person who gave the argument (a command line, a form), without
// echoing the value.
type ArgError struct {
	Reason string
}

func (e *ArgError) Error() string { return e.Reason + ": " + ErrInvalid.Error() }

// Is makes an ArgError match ErrInvalid.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid }

// invalidf returns an *ArgError.
func invalidf(format string, args ...any) error {
	return &ArgError{Reason: fmt.Sprintf(format, args...)}
}

// CheckProjectID returns an error matching ErrInvalid unless id is a project
// slug.
func CheckProjectID(id string) error {
	if !ValidProjectID(id) {
		return invalidf("project id is not a slug [a-z0-9][a-z0-9-]{0,62}")
	}
	return nil
}

// CheckID returns an error matching ErrInvalid unless id, the id named what,
// is 1 to MaxIDLen bytes of printable ASCII other than ':', which a cursor
// (<id>:<time>, split at the first ':') could not carry.
func CheckID(what, id string) error {
	switch {
	case id == "":
		return invalidf("empty %s", what)
	case len(id) > MaxIDLen:
		return invalidf("%s longer than %d bytes", what, MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' || id[i] == ':' {
			return invalidf("%s holds a byte that is not printable ASCII or is ':'", what)
		}
	}
	return nil
}

// CheckKey checks the (project id, row id) pair that every lookup of a row
// takes.
func CheckKey(projectID, what, id string) error {
	if err := CheckProjectID(projectID); err != nil {
		return err
	}
	return CheckID(what, id)
}

// CheckTime returns an error matching ErrInvalid when t, the time named
// what, is the zero time. Every time a write is given must be set.
func CheckTime(what string, t time.Time) error {
	if t.IsZero() {
		return invalidf("zero %s", what)
	}
	return nil
}

// CheckPage returns an error matching ErrInvalid unless req.Limit is at
// least 1.
func CheckPage(req paginate.Request) error {
	if req.Limit < 1 {
		return invalidf("page limit below 1")
	}
	return nil
}

// CheckEmail returns an error matching ErrInvalid unless email is one
// address (an RFC 5322 dot-atom addr-spec such as "ann@example.com": no
// quoted local part, display name or angle brackets) of at most MaxEmailLen bytes, with no
// white space around it. Lookups by email accept anything that
// NormalizeEmail does not make empty; only new users' emails are checked.
func CheckEmail(email string) error {
	switch {
	case email == "":
		return invalidf("empty email")
	case len(email) > MaxEmailLen:
		return invalidf("email longer than %d bytes", MaxEmailLen)
	case strings.TrimSpace(email) != email:
		return invalidf("email has white space around it")
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email {
		return invalidf("email is not an address such as ann@example.com")
	}
	return nil
}

// CheckName returns an error matching ErrInvalid unless name, the name named
// what (a contact's, an API key's), is valid UTF-8 of 1 to MaxNameLen
// characters, without white space around it, control characters, or the
// bidirectional formatting characters that can make a name display as
// another (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C).
func CheckName(what, name string) error {
	switch {
	case name == "":
		return invalidf("empty %s", what)
	case !utf8.ValidString(name):
		return invalidf("%s is not valid UTF-8", what)
	case utf8.RuneCountInString(name) > MaxNameLen:
		return invalidf("%s longer than %d characters", what, MaxNameLen)
	case strings.TrimSpace(name) != name:
		return invalidf("%s has white space around it", what)
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalidf("%s holds control characters", what)
	case strings.ContainsFunc(name, isBidiControl):
		return invalidf("%s holds bidirectional formatting characters", what)
	}
	return nil
}

// isBidiControl reports whether r is a Unicode bidirectional formatting
// character.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200E || r == 0x200F || r == 0x061C
}

// CheckTags returns an error matching ErrInvalid unless tags holds at most
// MaxTags distinct tags, each 1 to MaxTagLen characters of letters, digits
// and "-", "_", ".", ":", starting with a letter or digit. nil and empty
// are both no tags.
func CheckTags(tags []string) error {
	if len(tags) > MaxTags {
		return invalidf("more than %d tags", MaxTags)
	}
	for i, t := range tags {
		if err := checkTag(t); err != nil {
			return err
		}
		for _, u := range tags[:i] {
			if u == t {
				return invalidf("a tag is given twice")
			}
		}
	}
	return nil
}

func checkTag(t string) error {
	if t == "" || !utf8.ValidString(t) || utf8.RuneCountInString(t) > MaxTagLen {
		return invalidf("a tag must be 1 to %d characters", MaxTagLen)
	}
	for i, r := range t {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || i > 0 && strings.ContainsRune("-_.:", r)
		if !ok {
			return invalidf("a tag may hold only letters, digits and - _ . : (starting with a letter or digit)")
		}
	}
	return nil
}

// CheckUser checks a new user: project, id, email, a non-empty password
// hash, tags, CreatedAt set, DisabledAt zero.
func CheckUser(u User) error {
	return errors.Join(
		CheckKey(u.ProjectID, "user id", u.ID),
		CheckEmail(u.Email),
		nonEmpty("password hash", u.PasswordHash),
		CheckTags(u.Tags),
		CheckTime("created at", u.CreatedAt),
		zeroTime("disabled at", u.DisabledAt),
	)
}

// CheckPasswordHash checks SetPasswordHash's arguments: project, user id
// and a non-empty hash.
func CheckPasswordHash(projectID, id, hash string) error {
	return errors.Join(
		CheckKey(projectID, "user id", id),
		nonEmpty("password hash", hash),
	)
}

// CheckPasswordHashReplacement checks the arguments of a
// ReplacePasswordHash: as CheckPasswordHash, and a non-empty old hash.
func CheckPasswordHashReplacement(projectID, id, old, hash string) error {
	return errors.Join(
		CheckPasswordHash(projectID, id, hash),
		nonEmpty("old password hash", old),
	)
}

// CheckContact checks a contact to create: project, id, name, CreatedAt
// set.
func CheckContact(c Contact) error {
	return errors.Join(
		CheckKey(c.ProjectID, "contact id", c.ID),
		CheckName("contact name", c.Name),
		CheckTime("created at", c.CreatedAt),
	)
}

// CheckAPIKey checks an API key record to create: project, id, name,
// scopes (CheckScopes), CreatedAt set, ExpiresAt zero or after CreatedAt,
// LastUsedAt, RevokedAt and RevokesAt zero, RolledFrom and RolledTo empty (a roll
// sets them, see CheckRoll).
func CheckAPIKey(k APIKey) error {
	var exp, rolled error
	if !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(k.CreatedAt) {
		exp = invalidf("expiry must be after creation")
	}
	if k.RolledFrom != "" || k.RolledTo != "" {
		rolled = invalidf("a new key is not rolled")
	}
	return errors.Join(
		CheckKey(k.ProjectID, "API key id", k.ID),
		CheckName("API key name", k.Name),
		CheckScopes(k.Scopes),
		CheckTime("created at", k.CreatedAt),
		exp, rolled,
		zeroTime("last used at", k.LastUsedAt),
		zeroTime("revoked at", k.RevokedAt),
		zeroTime("revokes at", k.RevokesAt),
	)
}

// ValidScope reports whether s is a scope name: 1 to MaxScopeLen bytes of
// [a-z0-9_.:-].
func ValidScope(s string) bool {
	if s == "" || len(s) > MaxScopeLen {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_.:-", c) >= 0) {
			return false
		}
	}
	return true
}

// CheckScopes returns an error matching ErrInvalid unless scopes holds at
// most MaxScopes distinct scope names (ValidScope). nil and empty are both
// no scopes: a key that may do everything.
func CheckScopes(scopes []string) error {
	if len(scopes) > MaxScopes {
		return invalidf("more than %d scopes", MaxScopes)
	}
	for i, sc := range scopes {
		if !ValidScope(sc) {
			return invalidf("a scope must be 1 to %d characters of a-z 0-9 _ . : -", MaxScopeLen)
		}
		for _, u := range scopes[:i] {
			if u == sc {
				return invalidf("a scope is given twice")
			}
		}
	}
	return nil
}

// CheckRoll checks the arguments of RollAPIKey: the project and id of the
// key rolled, its successor next (CheckAPIKey, in the same project, another
// id) and a revocation time revokeAt that is set.
func CheckRoll(projectID, id string, next APIKey, revokeAt time.Time) error {
	var other error
	if next.ProjectID != projectID {
		other = invalidf("the successor is in another project")
	} else if next.ID == id {
		other = invalidf("the successor has the rolled key's id")
	}
	return errors.Join(
		CheckKey(projectID, "API key id", id),
		CheckAPIKey(next),
		other,
		CheckTime("revocation time", revokeAt),
	)
}

// CheckRollable returns the error RollAPIKey returns for rolling old, as
// read in the rolling transaction, into next at now: one matching
// ErrConflict when old was rolled already, ErrRevoked when it is revoked at
// now, ErrExpired when it has expired at now, and ErrInvalid when next's
// name or scopes are not old's. It returns nil when the roll may go ahead.
func CheckRollable(old, next APIKey, now time.Time) error {
	switch {
	case old.RolledTo != "":
		return fmt.Errorf("API key rolled already: %w", ErrConflict)
	case old.RevokedBy(now):
		return fmt.Errorf("API key revoked: %w", ErrRevoked)
	case old.ExpiredBy(now):
		return fmt.Errorf("API key expired: %w", ErrExpired)
	case next.Name != old.Name || !slices.Equal(next.Scopes, old.Scopes):
		return invalidf("a successor has the name and scopes of the key it replaces")
	}
	return nil
}

// ScopesOf returns the scopes of text, scope names separated by spaces
// (the form of the scope claim and of the stores' column), never nil.
func ScopesOf(text string) []string {
	sc := strings.Fields(text)
	if sc == nil {
		sc = []string{}
	}
	return sc
}

// CheckSigningKey checks a signing key record to create: project, id, a
// known algorithm with a public key of its form (see SigningKey.PublicKey;
// an RSA key of 2048 to 8192 bits), a sealed private key, CreatedAt set,
// RetiredAt zero.
func CheckSigningKey(k SigningKey) error {
	pub := CheckPublicKey(k.Algorithm, k.PublicKey)
	var priv error
	if len(k.EncryptedPrivateKey) == 0 {
		priv = invalidf("empty sealed private key")
	}
	return errors.Join(
		CheckKey(k.ProjectID, "signing key id", k.ID),
		pub, priv,
		CheckTime("created at", k.CreatedAt),
		zeroTime("retired at", k.RetiredAt),
	)
}

// CheckFamily checks a refresh family to create: project, id, user id,
// Generation 0, IssuedAt, ExpiresAt and CreatedAt set, RevokedAt zero. A
// zero EndsAt means no absolute end.
func CheckFamily(f RefreshFamily) error {
	var gen error
	if f.Generation != 0 {
		gen = invalidf("generation is not 0")
	}
	return errors.Join(
		CheckKey(f.ProjectID, "family id", f.ID),
		CheckID("user id", f.UserID),
		gen,
		CheckTime("issued at", f.IssuedAt),
		CheckTime("expires at", f.ExpiresAt),
		CheckTime("created at", f.CreatedAt),
		zeroTime("revoked at", f.RevokedAt),
	)
}

// CheckFamilyStart checks CreateRefreshFamily's arguments: f (CheckFamily)
// and the password hash the sign-in checked, not empty.
func CheckFamilyStart(f RefreshFamily, passwordHash string) error {
	return errors.Join(CheckFamily(f), nonEmpty("password hash", passwordHash))
}

// CheckRotate checks RotateRefresh's generation and parameters: gen not
// negative, p.Now set, p.TTL positive, p.ReuseWindow not negative.
func CheckRotate(gen int64, p RotateParams) error {
	switch {
	case gen < 0:
		return invalidf("negative generation")
	case p.Now.IsZero():
		return invalidf("zero Now")
	case p.TTL <= 0:
		return invalidf("TTL not positive")
	case p.ReuseWindow < 0:
		return invalidf("negative reuse window")
	}
	return nil
}

// CheckThrottle checks a throttle key and window: a non-empty key of at most
// 512 bytes and a positive window.
func CheckThrottle(key string, window time.Duration) error {
	switch {
	case key == "":
		return invalidf("empty throttle key")
	case len(key) > 512:
		return invalidf("throttle key longer than 512 bytes")
	case window <= 0:
		return invalidf("throttle window not positive")
	}
	return nil
}

// CheckThrottleKeys checks the arguments of ThrottleStore.FailuresOf: one
// to MaxThrottleKeys keys, each accepted by CheckThrottle with window, and
// a set now.
func CheckThrottleKeys(keys []string, now time.Time, window time.Duration) error {
	if len(keys) == 0 || len(keys) > MaxThrottleKeys {
		return invalidf("%d throttle keys, not 1 to %d", len(keys), MaxThrottleKeys)
	}
	for _, k := range keys {
		if err := CheckThrottle(k, window); err != nil {
			return err
		}
	}
	return CheckTime("now", now)
}

// CheckAudit checks an audit entry to append: project, id, At set, a
// non-empty action, and actor, target and client address of at most
// MaxIDLen bytes each.
func CheckAudit(e AuditEntry) error {
	var long error
	if len(e.Actor) > MaxIDLen || len(e.Target) > MaxIDLen || len(e.ClientAddr) > MaxIDLen {
		long = invalidf("audit actor, target or client address longer than %d bytes", MaxIDLen)
	}
	return errors.Join(
		CheckKey(e.ProjectID, "audit entry id", e.ID),
		CheckTime("at", e.At),
		nonEmpty("action", e.Action),
		long,
	)
}

// CheckConsoleSession checks a console session to create: project, id (a
// SHA-256 in lowercase hex), user id, CreatedAt and LastSeenAt set.
func CheckConsoleSession(s ConsoleSession) error {
	var id error
	if len(s.ID) != 64 || strings.Trim(s.ID, "0123456789abcdef") != "" {
		id = invalidf("console session id is not a SHA-256 in lowercase hex")
	}
	return errors.Join(
		CheckProjectID(s.ProjectID),
		id,
		CheckID("user id", s.UserID),
		CheckTime("created at", s.CreatedAt),
		CheckTime("last seen at", s.LastSeenAt),
	)
}

func nonEmpty(what, s string) error {
	if s == "" {
		return invalidf("empty %s", what)
	}
	return nil
}

func zeroTime(what string, t time.Time) error {
	if !t.IsZero() {
		return invalidf("%s must be the zero time", what)
	}
	return nil
}

// Bounds of an RSA signing key's modulus.
const (
	MinRSABits = 2048
	MaxRSABits = 8192
)

// CheckPublicKey checks that pub is a public key of the signing algorithm
// alg in the form SigningKey.PublicKey states: an error matching
// ErrInvalid for an unknown algorithm or a key that is not of its form.
func CheckPublicKey(alg string, pub []byte) error {
	switch alg {
	case AlgEdDSA:
		if len(pub) != 32 {
			return invalidf("EdDSA public key is not 32 bytes")
		}
	case AlgES256:
		if _, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub); err != nil {
			return invalidf("ES256 public key is not an uncompressed P-256 point")
		}
	case AlgRS256:
		k, err := x509.ParsePKCS1PublicKey(pub)
		if err != nil {
			return invalidf("RS256 public key is not a PKCS #1 RSA public key")
		}
		if n := k.N.BitLen(); n < MinRSABits || n > MaxRSABits {
			return invalidf("RS256 public key is not of %d to %d bits", MinRSABits, MaxRSABits)
		}
	default:
		return invalidf("signing algorithm is not EdDSA, ES256 or RS256")
	}
	return nil
}
