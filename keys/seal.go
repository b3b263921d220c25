package keys

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// sealInfo is the HKDF info string of the signing-key sealing key.
const sealInfo = "latchkey signing-key seal v1"

// sealer encrypts and decrypts private signing keys at rest.
//
// The sealing key is HKDF-SHA256(master key, no salt, info
// "latchkey signing-key seal v1"). A sealed key is a random 24-byte nonce
// followed by the XChaCha20-Poly1305 encryption of the private key's bytes
// (the 32-byte Ed25519 seed, the 32-byte P-256 scalar, or the PKCS #1 DER of
// an RSA key), authenticated with the additional data projectID + "/" +
// kid, so a sealed key moved to another project or id does not open.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(master []byte) (*sealer, error) {
	if err := CheckMasterKey(master); err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(DeriveKey(master, sealInfo))
	if err != nil {
		return nil, fmt.Errorf("keys: sealing cipher: %w", err)
	}
	return &sealer{aead: aead}, nil
}

func sealAD(projectID, kid string) []byte { return []byte(projectID + "/" + kid) }

// seal encrypts seed for the key kid of projectID.
func (s *sealer) seal(projectID, kid string, seed []byte) []byte {
	out := make([]byte, chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX+len(seed)+s.aead.Overhead())
	_, _ = rand.Read(out) // crypto/rand.Read never returns an error.
	return s.aead.Seal(out, out, seed, sealAD(projectID, kid))
}

// errUnseal is returned for a sealed key that does not open: a wrong master
// key, or bytes altered or moved to another project or kid.
var errUnseal = errors.New("keys: sealed private key does not open (wrong master key or altered record)")

// open decrypts a sealed key of kid in projectID.
func (s *sealer) open(projectID, kid string, sealed []byte) ([]byte, error) {
	if len(sealed) < chacha20poly1305.NonceSizeX+s.aead.Overhead() {
		return nil, errUnseal
	}
	nonce, ct := sealed[:chacha20poly1305.NonceSizeX], sealed[chacha20poly1305.NonceSizeX:]
	seed, err := s.aead.Open(nil, nonce, ct, sealAD(projectID, kid))
	if err != nil {
		return nil, errUnseal
	}
	return seed, nil
}
