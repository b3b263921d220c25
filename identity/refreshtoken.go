package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// Refresh token text is "rt_" + base64url (no padding) of
//
//	family id's random part (16 bytes) || generation (8 bytes, big endian) || MAC (32 bytes)
//
// with MAC = HMAC-SHA256(K, "latchkey-rt-v1" || projectID || familyID ||
// generation) and K = keys.DeriveKey(master key, "latchkey refresh-token mac
// v1"). The store keeps only the family's generation counter; the server
// re-derives any generation's text, so the successor handed out again within
// the reuse window needs no stored plaintext.
const (
	refreshPrefix     = "rt_"
	refreshMACContext = "latchkey-rt-v1"
	refreshKeyInfo    = "latchkey refresh-token mac v1"

	refreshMACLen  = sha256.Size
	refreshRawLen  = store.IDBytes + 8 + refreshMACLen
	refreshTextLen = len(refreshPrefix) + (refreshRawLen*8+5)/6
)

// refreshCodec makes and checks refresh token text.
type refreshCodec struct {
	key []byte
}

func newRefreshCodec(masterKey []byte) refreshCodec {
	return refreshCodec{key: keys.DeriveKey(masterKey, refreshKeyInfo)}
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
// by store.NewID(store.PrefixFamily), in project projectID.
func (c refreshCodec) token(projectID, familyID string, gen int64) string {
	rnd, ok := store.ParseID(store.PrefixFamily, familyID)
	if !ok {
		panic("identity: malformed refresh family id") // ids are made by store.NewID
	}
	raw := make([]byte, 0, refreshRawLen)
	raw = append(raw, rnd[:]...)
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
	var rnd [store.IDBytes]byte
	copy(rnd[:], raw)
	g := binary.BigEndian.Uint64(raw[store.IDBytes:])
	familyID = store.FormatID(store.PrefixFamily, rnd)
	if !hmac.Equal(raw[store.IDBytes+8:], c.mac(projectID, familyID, g)) || g > 1<<62 {
		return "", 0, false
	}
	return familyID, int64(g), true
}
