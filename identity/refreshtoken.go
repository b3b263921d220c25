package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"io"

	"golang.org/x/crypto/hkdf"

	"github.com/latchkey-dev/latchkey/store"
)

// Refresh token text is "rt_" + base64url (no padding) of
//
//	family random part (16 bytes) || generation (8 bytes, big endian) || MAC (32 bytes)
//
// with MAC = HMAC-SHA256(K, "latchkey-rt-v1" || projectID || familyID ||
// generation) and K = HKDF-SHA256(master key, info "latchkey refresh-token
// mac v1"). The store keeps only the family's generation counter; the
// server re-derives any generation's text, so the successor handed out
// again within the reuse window needs no stored plaintext.
const (
	refreshPrefix     = "rt_"
	refreshMACContext = "latchkey-rt-v1"
	refreshHKDFInfo   = "latchkey refresh-token mac v1"

	familyRandLen  = 16
	refreshMACLen  = sha256.Size
	refreshRawLen  = familyRandLen + 8 + refreshMACLen
	refreshTextLen = len(refreshPrefix) + (refreshRawLen*8+5)/6
)

// familyIDEncoding is the encoding of store.NewID: the random part of a
// family id "rf_..." is these 16 bytes in this base32 alphabet.
var familyIDEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// refreshCodec makes and checks refresh token text.
type refreshCodec struct {
	key []byte
}

func newRefreshCodec(masterKey []byte) refreshCodec {
	key := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, masterKey, nil, []byte(refreshHKDFInfo)), key); err != nil {
		panic("identity: deriving the refresh token key: " + err.Error()) // unreachable for 32 bytes
	}
	return refreshCodec{key: key}
}

// newFamilyID returns a fresh family id in the shape of store.NewID.
func newFamilyID() string {
	var b [familyRandLen]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return store.PrefixFamily + "_" + familyIDEncoding.EncodeToString(b[:])
}

func (c refreshCodec) mac(projectID, familyID string, gen uint64) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(refreshMACContext))
	m.Write([]byte(projectID))
	m.Write([]byte(familyID))
	var g [8]byte
	binary.BigEndian.PutUint64(g[:], gen)
	m.Write(g[:])
	return m.Sum(nil)
}

// token returns the text of generation gen of family familyID, an id made
// by newFamilyID, in project projectID.
func (c refreshCodec) token(projectID, familyID string, gen int64) string {
	rnd, err := familyIDEncoding.DecodeString(familyID[len(store.PrefixFamily)+1:])
	if err != nil || len(rnd) != familyRandLen {
		panic("identity: malformed refresh family id") // ids are made by newFamilyID
	}
	raw := make([]byte, 0, refreshRawLen)
	raw = append(raw, rnd...)
	raw = binary.BigEndian.AppendUint64(raw, uint64(gen))
	raw = append(raw, c.mac(projectID, familyID, uint64(gen))...)
	return refreshPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// parse returns the family and generation of a refresh token made for
// projectID, checking its MAC in constant time. ok is false for anything
// else: wrong length or alphabet, a generation out of range, a forged or
// altered token, or a token of another project.
func (c refreshCodec) parse(projectID, text string) (familyID string, gen int64, ok bool) {
	if len(text) != refreshTextLen || text[:len(refreshPrefix)] != refreshPrefix {
		return "", 0, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text[len(refreshPrefix):])
	if err != nil || len(raw) != refreshRawLen {
		return "", 0, false
	}
	g := binary.BigEndian.Uint64(raw[familyRandLen:])
	familyID = store.PrefixFamily + "_" + familyIDEncoding.EncodeToString(raw[:familyRandLen])
	if !hmac.Equal(raw[familyRandLen+8:], c.mac(projectID, familyID, g)) || g > 1<<62 {
		return "", 0, false
	}
	return familyID, int64(g), true
}
