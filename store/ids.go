package store

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
	"time"
)

// Id prefixes of the domain types.
const (
	PrefixUser       = "usr"
	PrefixContact    = "ct"
	PrefixAPIKey     = "key"
	PrefixSigningKey = "sk"
	PrefixFamily     = "rf"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// NewID returns prefix + "_" + 26 characters encoding 128 random bits, for
// example "usr_0a1b2c...". The random part uses lowercase letters and digits
// only, so ids are safe in URLs, cursors and logs.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

var projectIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// DefaultProject is the id of the project that always exists.
const DefaultProject = "default"

// ValidProjectID reports whether id is a project slug:
// [a-z0-9][a-z0-9-]{0,62}.
func ValidProjectID(id string) bool { return projectIDPattern.MatchString(id) }

// NormalizeEmail returns the form in which emails are compared: trimmed of
// surrounding white space and lower-cased. Stores compare emails in this
// form; they keep and return the email as it was given.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Truncate returns t in UTC, truncated to the microsecond precision every
// store keeps.
func Truncate(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
