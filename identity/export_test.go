package identity

import "context"

// HoldSlots takes every hashing slot of h, as that many hashes in progress
// would, and returns the function that gives them back.
func (h *Hasher) HoldSlots(ctx context.Context) (release func(), err error) {
	n := cap(h.slots)
	for i := 0; i < n; i++ {
		if err := h.acquire(ctx, nil); err != nil {
			for ; i > 0; i-- {
				h.release()
			}
			return nil, err
		}
	}
	return func() {
		for i := 0; i < n; i++ {
			h.release()
		}
	}, nil
}

// RefreshToken returns the text of generation gen of family familyID in
// project projectID under masterKey, as a Handler with that master key
// would issue it.
func RefreshToken(masterKey []byte, projectID, familyID string, gen int64) string {
	return newRefreshCodec(masterKey).token(projectID, familyID, gen)
}

// Slots returns how many hashes h runs at once.
func (h *Hasher) Slots() int { return cap(h.slots) }

// DecoyHash is decoyHash, the hash an Authenticator checks in place of an
// unknown user's.
var DecoyHash = decoyHash
