package store

import (
	"strings"
	"unicode/utf8"
)

// Deployment settings (see SettingStore).
const (
	// SettingPublicURL is the deployment's public URL as its server last
	// recorded it (the example server's serve: -public-url, or the address
	// it listens on), so that a command line that mints tokens without
	// being told the URL gives them the same iss as the server does.
	SettingPublicURL = "public_url"

	// MaxSettingNameLen is the longest setting name, in bytes.
	MaxSettingNameLen = 64
	// MaxSettingValueLen is the longest setting value, in bytes.
	MaxSettingValueLen = 4096
)

// CheckSetting returns an error matching ErrInvalid unless name is 1 to
// MaxSettingNameLen bytes of lower-case ASCII letters, digits, "_", "." and
// "-", and value is valid UTF-8 of at most MaxSettingValueLen bytes without
// a NUL byte. An empty value is a value.
func CheckSetting(name, value string) error {
	if err := CheckSettingName(name); err != nil {
		return err
	}
	switch {
	case len(value) > MaxSettingValueLen:
		return invalidf("setting value longer than %d bytes", MaxSettingValueLen)
	case !utf8.ValidString(value):
		return invalidf("setting value is not valid UTF-8")
	case strings.IndexByte(value, 0) >= 0:
		return invalidf("setting value holds a NUL byte")
	}
	return nil
}

// CheckSettingName returns an error matching ErrInvalid unless name is a
// setting name as CheckSetting describes it.
func CheckSettingName(name string) error {
	switch {
	case name == "":
		return invalidf("empty setting name")
	case len(name) > MaxSettingNameLen:
		return invalidf("setting name longer than %d bytes", MaxSettingNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return invalidf("setting name holds a byte other than [a-z0-9_.-]")
		}
	}
	return nil
}
