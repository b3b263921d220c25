package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func signingKeyCases() []testCase {
	return []testCase{
		{"CreateGet", testSigningKeyCreateGet},
		{"Duplicate", testSigningKeyDuplicate},
		{"Invalid", testSigningKeyInvalid},
		{"UnknownProject", testSigningKeyUnknownProject},
		{"Unknown", testSigningKeyUnknown},
		{"Active", testSigningKeyActive},
		{"ActiveTie", testSigningKeyActiveTie},
		{"Rotate", testSigningKeyRotate},
		{"Retire", testSigningKeyRetire},
		{"RetireActive", testSigningKeyRetireActive},
		{"RetireTwiceKeepsFirst", testSigningKeyRetireTwice},
		{"ListOrder", testSigningKeyListOrder},
		{"OtherProject", testSigningKeyOtherProject},
		{"Algorithms", testSigningKeyAlgorithms},
		{"AlgorithmInvalid", testSigningKeyAlgorithmInvalid},
	}
}

func wantSigningKey(t *testing.T, want, got store.SigningKey, what string) {
	t.Helper()
	require.Equalf(t, want.ID, got.ID, "%s: ID", what)
	require.Equalf(t, want.ProjectID, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, want.Algorithm, got.Algorithm, "%s: Algorithm", what)
	wantBytes(t, want.PublicKey, got.PublicKey, "%s: PublicKey", what)
	wantBytes(t, want.EncryptedPrivateKey, got.EncryptedPrivateKey, "%s: EncryptedPrivateKey", what)
	wantTime(t, want.CreatedAt, got.CreatedAt, "%s: CreatedAt", what)
	wantTime(t, want.RetiredAt, got.RetiredAt, "%s: RetiredAt", what)
}

func mustGetSigningKey(t *testing.T, s store.SigningKeyStore, project, id string) store.SigningKey {
	t.Helper()
	k, err := s.GetSigningKey(t.Context(), project, id)
	require.NoErrorf(t, err, "GetSigningKey(%q, %q)", project, id)
	return k
}

func mustActive(t *testing.T, s store.SigningKeyStore, project string) store.SigningKey {
	t.Helper()
	k, err := s.ActiveSigningKey(t.Context(), project)
	require.NoErrorf(t, err, "ActiveSigningKey(%q)", project)
	return k
}

func signingKeyIDs(ks []store.SigningKey) []string {
	return idsOf(ks, func(k store.SigningKey) string { return k.ID })
}

// CreateSigningKey records the key; GetSigningKey returns its bytes
// unchanged and unaliased, unretired.
func testSigningKeyCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := newSigningKey(projA, store.NewID(store.PrefixSigningKey), base.In(elsewhere))
	// Opaque bytes: every byte value, including NUL and invalid UTF-8.
	k.EncryptedPrivateKey = make([]byte, 256+24+16)
	for i := range k.EncryptedPrivateKey {
		k.EncryptedPrivateKey[i] = byte(i)
	}
	in := k
	in.PublicKey = append([]byte(nil), k.PublicKey...)
	in.EncryptedPrivateKey = append([]byte(nil), k.EncryptedPrivateKey...)
	require.NoErrorf(t, s.CreateSigningKey(t.Context(), in), "CreateSigningKey(%q)", k.ID)
	// The store keeps its own copy of the bytes.
	in.PublicKey[0] ^= 0xff
	in.EncryptedPrivateKey[0] ^= 0xff

	got := mustGetSigningKey(t, s, projA, k.ID)
	wantSigningKey(t, k, got, "GetSigningKey")
	require.False(t, got.Retired(), "Retired() of a new key")
	wantZeroTime(t, got.RetiredAt, "RetiredAt of a new key")
	got.PublicKey[1] ^= 0xff // a caller changing the result changes nothing stored
	wantSigningKey(t, k, mustGetSigningKey(t, s, projA, k.ID), "GetSigningKey again")
	wantSigningKey(t, k, mustActive(t, s, projA), "ActiveSigningKey of the only key")
}

// CreateSigningKey returns ErrConflict for an existing id and keeps the
// first key.
func testSigningKeyDuplicate(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustSigningKey(t, s, projA, "sk_1", base)
	dup := newSigningKey(projA, "sk_1", base.Add(time.Hour))
	dup.PublicKey = publicKey(99)
	require.ErrorIsf(t, s.CreateSigningKey(t.Context(), dup), store.ErrConflict, "CreateSigningKey(%q) with an existing id", dup.ID)
	wantSigningKey(t, k, mustGetSigningKey(t, s, projA, k.ID), "GetSigningKey after a conflicting create")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Len(t, ks, 1)
}

// An empty id, a public key that is not 32 bytes, or an invalid project id
// is ErrInvalid and stores nothing.
func testSigningKeyInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	noID := newSigningKey(projA, "", base)
	require.ErrorIsf(t, s.CreateSigningKey(t.Context(), noID), store.ErrInvalid, "CreateSigningKey with an empty id")
	for _, n := range []int{0, 1, 31, 33, 64} {
		k := newSigningKey(projA, "sk_len", base)
		k.PublicKey = make([]byte, n)
		require.ErrorIsf(t, s.CreateSigningKey(t.Context(), k), store.ErrInvalid, "CreateSigningKey with a %d-byte public key", n)
	}
	nilKey := newSigningKey(projA, "sk_len", base)
	nilKey.PublicKey = nil
	require.ErrorIsf(t, s.CreateSigningKey(t.Context(), nilKey), store.ErrInvalid, "CreateSigningKey with a nil public key")
	for _, p := range []string{"", "Proj A"} {
		require.ErrorIsf(t, s.CreateSigningKey(t.Context(), newSigningKey(p, "sk_p", base)), store.ErrInvalid, "CreateSigningKey in project %q", p)
		_, err := s.GetSigningKey(t.Context(), p, "sk_p")
		require.ErrorIsf(t, err, store.ErrInvalid, "GetSigningKey(%q, ...)", p)
		_, err = s.ActiveSigningKey(t.Context(), p)
		require.ErrorIsf(t, err, store.ErrInvalid, "ActiveSigningKey(%q)", p)
		_, err = s.ListSigningKeys(t.Context(), p)
		require.ErrorIsf(t, err, store.ErrInvalid, "ListSigningKeys(%q)", p)
		require.ErrorIsf(t, s.RetireSigningKey(t.Context(), p, "sk_p", base), store.ErrInvalid, "RetireSigningKey(%q, ...)", p)
	}
	_, err := s.GetSigningKey(t.Context(), projA, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "GetSigningKey(%q, \"\")", projA)
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, "", base), store.ErrInvalid, "RetireSigningKey(%q, \"\")", projA)

	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Empty(t, ks, "ListSigningKeys after only rejected creates")
	_, err = s.ActiveSigningKey(t.Context(), projA)
	require.ErrorIsf(t, err, store.ErrNotFound, "ActiveSigningKey(%q) after only rejected creates", projA)
}

// CreateSigningKey in an unknown project is ErrNotFound and leaves no row.
func testSigningKeyUnknownProject(t *testing.T, s store.Store) {
	k := newSigningKey("no-such-project", "sk_orphan", base)
	require.ErrorIsf(t, s.CreateSigningKey(t.Context(), k), store.ErrNotFound, "CreateSigningKey in unknown project %q", k.ProjectID)
	_, err := s.ActiveSigningKey(t.Context(), "no-such-project")
	require.ErrorIsf(t, err, store.ErrNotFound, "ActiveSigningKey of an unknown project")
	mustProject(t, s, "no-such-project")
	_, err = s.GetSigningKey(t.Context(), "no-such-project", k.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetSigningKey after the project is created: the failed create must have left no row")
}

// GetSigningKey and RetireSigningKey return ErrNotFound for an unknown key;
// ActiveSigningKey returns ErrNotFound for a project without keys.
func testSigningKeyUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	_, err := s.ActiveSigningKey(t.Context(), projA)
	require.ErrorIsf(t, err, store.ErrNotFound, "ActiveSigningKey(%q) of a project without keys", projA)
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q) of a project without keys", projA)
	require.Empty(t, ks)
	mustSigningKey(t, s, projA, "sk_known", base)
	for _, id := range []string{"sk_unknown", "SK_KNOWN", "sk_know"} {
		_, err := s.GetSigningKey(t.Context(), projA, id)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetSigningKey(%q, %q)", projA, id)
		require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, id, base), store.ErrNotFound, "RetireSigningKey(%q, %q)", projA, id)
	}
}

// The active key is the newest unretired key by (CreatedAt, ID): a key
// created with an older CreatedAt than the active one does not replace it.
func testSigningKeyActive(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k1 := mustSigningKey(t, s, projA, "sk_1", base)
	wantSigningKey(t, k1, mustActive(t, s, projA), "ActiveSigningKey with one key")
	k2 := mustSigningKey(t, s, projA, "sk_2", base.Add(time.Hour))
	wantSigningKey(t, k2, mustActive(t, s, projA), "ActiveSigningKey after a newer key")
	mustSigningKey(t, s, projA, "sk_3", base.Add(30*time.Minute)) // older than sk_2
	wantSigningKey(t, k2, mustActive(t, s, projA), "ActiveSigningKey after creating an older key")
	mustSigningKey(t, s, projA, "sk_0", base.Add(time.Hour-time.Microsecond)) // one microsecond older than sk_2
	wantSigningKey(t, k2, mustActive(t, s, projA), "ActiveSigningKey after creating a key one microsecond older")
}

// Keys created in one microsecond are ordered by id, byte-wise: the
// greatest id is active.
func testSigningKeyActiveTie(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := base.Add(time.Hour)
	mustSigningKey(t, s, projA, "sk_a", at)
	big := mustSigningKey(t, s, projA, "sk_b", at.Add(200*time.Nanosecond)) // same microsecond
	mustSigningKey(t, s, projA, "sk_B", at)                                 // "sk_B" < "sk_a" < "sk_b"
	wantSigningKey(t, big, mustActive(t, s, projA), "ActiveSigningKey of keys sharing a microsecond")
}

// Rotation is creating a newer key: it becomes active; the old key stays
// readable and listed, unretired.
func testSigningKeyRotate(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	old := mustSigningKey(t, s, projA, store.NewID(store.PrefixSigningKey), base)
	next := mustSigningKey(t, s, projA, store.NewID(store.PrefixSigningKey), base.Add(24*time.Hour))
	wantSigningKey(t, next, mustActive(t, s, projA), "ActiveSigningKey after rotation")
	wantSigningKey(t, old, mustGetSigningKey(t, s, projA, old.ID), "GetSigningKey of the previous key")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Equal(t, []string{old.ID, next.ID}, signingKeyIDs(ks))
	third := mustSigningKey(t, s, projA, store.NewID(store.PrefixSigningKey), base.Add(48*time.Hour))
	wantSigningKey(t, third, mustActive(t, s, projA), "ActiveSigningKey after a second rotation")
}

// Retiring a key that is not active sets RetiredAt; it stays readable and
// listed, and the active key is unchanged.
func testSigningKeyRetire(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	old := mustSigningKey(t, s, projA, "sk_old", base)
	active := mustSigningKey(t, s, projA, "sk_new", base.Add(time.Hour))
	at := base.Add(2 * time.Hour).In(elsewhere)
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, old.ID, at), "RetireSigningKey(%q) of a non-active key", old.ID)
	got := mustGetSigningKey(t, s, projA, old.ID)
	old.RetiredAt = at
	wantSigningKey(t, old, got, "GetSigningKey of a retired key")
	require.True(t, got.Retired(), "Retired() after RetireSigningKey")
	wantSigningKey(t, active, mustActive(t, s, projA), "ActiveSigningKey after retiring another key")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Equal(t, []string{"sk_old", "sk_new"}, signingKeyIDs(ks), "retired keys are listed")
	wantTime(t, at, ks[0].RetiredAt, "ListSigningKeys: RetiredAt of the retired key")

	// Once a newer key exists, the previous active key can be retired.
	mid := mustSigningKey(t, s, projA, "sk_mid", base.Add(90*time.Minute))
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, active.ID, at), "RetireSigningKey(%q) after a newer key exists", active.ID)
	wantSigningKey(t, mid, mustActive(t, s, projA), "ActiveSigningKey after retiring the previous active key")
}

// Retiring the active key is ErrConflict and changes nothing; after a
// rotation it succeeds.
func testSigningKeyRetireActive(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustSigningKey(t, s, projA, "sk_only", base)
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, k.ID, base.Add(time.Hour)), store.ErrConflict, "RetireSigningKey(%q) of the only, active key", k.ID)
	wantSigningKey(t, k, mustGetSigningKey(t, s, projA, k.ID), "GetSigningKey after a refused retire")
	wantSigningKey(t, k, mustActive(t, s, projA), "ActiveSigningKey after a refused retire")

	older := mustSigningKey(t, s, projA, "sk_older", base.Add(-time.Hour))
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, k.ID, base.Add(time.Hour)), store.ErrConflict, "RetireSigningKey(%q) of the active key beside an older one", k.ID)
	next := mustSigningKey(t, s, projA, "sk_next", base.Add(time.Hour))
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, k.ID, base.Add(2*time.Hour)), "RetireSigningKey(%q) after rotation", k.ID)
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, next.ID, base.Add(2*time.Hour)), store.ErrConflict, "RetireSigningKey(%q) of the new active key", next.ID)
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, older.ID, base.Add(2*time.Hour)), "RetireSigningKey(%q)", older.ID)
	wantSigningKey(t, next, mustActive(t, s, projA), "ActiveSigningKey at the end")
}

// Retiring a retired key succeeds, keeps the first time (a later or an
// earlier one given again changes nothing) and adds nothing to the feed.
func testSigningKeyRetireTwice(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustSigningKey(t, s, projA, "sk_old", base)
	mustSigningKey(t, s, projA, "sk_new", base.Add(time.Hour))
	first := base.Add(2 * time.Hour)
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, k.ID, first), "RetireSigningKey(%q)", k.ID)
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, k.ID, first.Add(time.Hour)), "RetireSigningKey(%q) again, later", k.ID)
	wantTime(t, first, mustGetSigningKey(t, s, projA, k.ID).RetiredAt, "RetiredAt after retiring twice")
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, k.ID, first.Add(-time.Hour)), "RetireSigningKey(%q) again, earlier", k.ID)
	wantTime(t, first, mustGetSigningKey(t, s, projA, k.ID).RetiredAt, "RetiredAt after retiring again at an earlier time: the first time")
	items := feedList(s, projA).all(t)
	require.Len(t, items, 1, "the feed after retiring three times: one item")
	wantTime(t, first, items[0].RevokedAt, "the feed item's RevokedAt")
}

// ListSigningKeys lists the project's keys, retired ones included, ascending
// by (CreatedAt, ID), ids compared byte-wise.
func testSigningKeyListOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	later := base.Add(time.Hour)
	mustSigningKey(t, s, projA, "sk_a", later)
	mustSigningKey(t, s, projA, "sk_z", base)
	mustSigningKey(t, s, projA, "sk_B", later)
	mustSigningKey(t, s, projA, "sk_Z", base)
	mustSigningKey(t, s, projA, "sk_0", base.Add(-time.Minute))
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, "sk_z", later), "RetireSigningKey(sk_z)")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Equal(t, []string{"sk_0", "sk_Z", "sk_z", "sk_B", "sk_a"}, signingKeyIDs(ks), "ListSigningKeys order")
	wantTime(t, later, ks[2].RetiredAt, "ListSigningKeys: RetiredAt of sk_z")
	for _, k := range ks {
		require.Len(t, k.PublicKey, 32)
		require.Equal(t, projA, k.ProjectID)
	}
}

// Only the project's own keys are listed, active or readable; another
// project's key is reported exactly as a missing one.
func testSigningKeyOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	a := mustSigningKey(t, s, projA, "sk_a", base)
	_, err := s.ActiveSigningKey(t.Context(), projB)
	require.ErrorIsf(t, err, store.ErrNotFound, "ActiveSigningKey(%q) with a key only in %q", projB, projA)
	b := mustSigningKey(t, s, projB, "sk_b", base.Add(-time.Hour))
	mustSigningKey(t, s, projA, "sk_a2", base.Add(time.Hour)) // newer, in A
	wantSigningKey(t, b, mustActive(t, s, projB), "ActiveSigningKey(B) beside a newer key of A")

	_, err = s.GetSigningKey(t.Context(), projB, a.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetSigningKey(%q, %q) of project %q's key", projB, a.ID, projA)
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projB, a.ID, base), store.ErrNotFound, "RetireSigningKey(%q, %q) of project %q's key", projB, a.ID, projA)
	wantSigningKey(t, a, mustGetSigningKey(t, s, projA, a.ID), "project A's key after B's retire attempt")

	ks, err := s.ListSigningKeys(t.Context(), projB)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projB)
	require.Equal(t, []string{"sk_b"}, signingKeyIDs(ks))
	ks, err = s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Equal(t, []string{"sk_a", "sk_a2"}, signingKeyIDs(ks))
}
