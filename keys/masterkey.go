package keys

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
)

// MasterKeySize is the length in bytes of the master key the host supplies.
const MasterKeySize = 32

// ErrMasterKey is matched by the error CheckMasterKey returns.
var ErrMasterKey = errors.New("keys: bad master key")

// CheckMasterKey returns an error matching ErrMasterKey unless master is
// MasterKeySize bytes and not all zero (a key left unset, never a random
// one).
func CheckMasterKey(master []byte) error {
	if len(master) != MasterKeySize {
		return fmt.Errorf("%w: it is %d bytes, want %d", ErrMasterKey, len(master), MasterKeySize)
	}
	var or byte
	for _, b := range master {
		or |= b
	}
	if or == 0 {
		return fmt.Errorf("%w: it is all zero bytes; make one with 32 random bytes", ErrMasterKey)
	}
	return nil
}

// DeriveKey returns the 32-byte key that Latchkey uses for the purpose info,
// derived from master (which CheckMasterKey accepts) with HKDF-SHA256, no
// salt. Every key Latchkey derives from the master key comes from here,
// each with its own info string, so that no two purposes share a key.
func DeriveKey(master []byte, info string) []byte {
	k, err := hkdf.Key(sha256.New, master, nil, info, 32)
	if err != nil {
		panic("keys: deriving a key: " + err.Error()) // unreachable: 32 bytes is far below HKDF's limit
	}
	return k
}
