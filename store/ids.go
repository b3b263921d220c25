package store

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
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
	PrefixRevocation = "rev"
	PrefixAudit      = "aud"
)

// IDBytes is the number of bytes an id's random part encodes.
const IDBytes = 16

// idEncoding encodes the 16 bytes of an id in 26 characters of lowercase
// letters and digits.
var idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// NewID returns prefix + "_" + 26 characters encoding 128 random bits, for
// example "usr_0a1b2c...". The random part uses lowercase letters and digits
// only, so ids are safe in URLs, cursors and logs.
func NewID(prefix string) string {
	var b [IDBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return FormatID(prefix, b)
}

// NewIDAt returns an id of NewID's shape whose first 48 bits are the Unix
// milliseconds of t and the other 80 random, so that ids made later sort
// after earlier ones (byte by byte). Bulk inserts use them: rows added in
// id order land at the end of an id index instead of all over it. The id
// shows when it was made, as a row's created_at would.
func NewIDAt(prefix string, t time.Time) string {
	var b [IDBytes]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return FormatID(prefix, b)
}

// FormatID returns the id with the given prefix and random part b.
func FormatID(prefix string, b [IDBytes]byte) string {
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// ParseID returns the random part of id, an id made by NewID, NewIDAt or
// FormatID with the given prefix, and false for anything else.
func ParseID(prefix, id string) ([IDBytes]byte, bool) {
	var b [IDBytes]byte
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != idEncoding.EncodedLen(IDBytes) {
		return b, false
	}
	n, err := idEncoding.Decode(b[:], []byte(rest))
	// The encoding's last character carries two unused bits: only the id
	// that FormatID would write is accepted, so one id has one spelling.
	if err != nil || n != IDBytes || FormatID(prefix, b) != id {
		return b, false
	}
	return b, true
}

// DefaultProject is the id of the project that always exists.
const DefaultProject = "default"

// NormalizeEmail returns the form in which emails are compared: trimmed of
// surrounding white space and lower-cased. Stores compare emails in this
// form; they keep and return the email as it was given.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Truncate returns t in UTC, truncated to the microsecond precision every
// store keeps.
func Truncate(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
