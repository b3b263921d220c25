package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// The controls of keys a team hands out: scopes, an optional expiry, and
// rolling a key with an overlap (RollAPIKey), with its scheduled revocation
// in the feed.
func keyControlCases() []testCase {
	return []testCase{
		{"ScopesAndExpiryKept", testKeyScopesExpiry},
		{"InvalidCreatesNothing", testKeyInvalidScopes},
		{"ListPage", testKeyListPage},
		{"ListPagePrefixLiteral", testKeyListPagePrefixes},
		{"CreatorAndSignerKept", testKeyCreatorAndSigner},
		{"Roll", testKeyRoll},
		{"RollNoOverlapRevokesAtOnce", testKeyRollAtOnce},
		{"RollRefused", testKeyRollRefused},
		{"RollScheduledNotListedBeforeItsTime", testKeyRollNotBefore},
		{"RollScheduledListedInOrderWhenDue", testKeyRollDue},
		{"RollScheduledRaisedPastTheFloor", testKeyRollDueRaised},
		{"RevokeDuringOverlap", testKeyRevokeDuringOverlap},
		{"RevokeAtOrAfterScheduled", testKeyRevokeAfterScheduled},
	}
}

// successorOf returns a successor of k for RollAPIKey, created at at.
func successorOf(k store.APIKey, id string, at time.Time) store.APIKey {
	return store.APIKey{ID: id, ProjectID: k.ProjectID, Name: k.Name, Scopes: k.Scopes, CreatedAt: at}
}

// CreateAPIKey keeps scopes, in order, and the expiry; a key without them
// reads back with empty (not nil) scopes and no expiry.
func testKeyScopesExpiry(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	long := strings.Repeat("a", store.MaxScopeLen)
	k := newAPIKey(projA, "key_scoped", base)
	k.Scopes = []string{"reports:read", "contacts:read", "a.b_c-d:e", long}
	k.ExpiresAt = base.Add(90 * 24 * time.Hour)
	require.NoErrorf(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey with scopes and expiry")
	got := mustGetAPIKey(t, s, projA, k.ID)
	require.Equal(t, k.Scopes, got.Scopes, "GetAPIKey().Scopes")
	wantTime(t, k.ExpiresAt, got.ExpiresAt, "GetAPIKey().ExpiresAt")
	require.Empty(t, got.RolledFrom, "RolledFrom of a created key")
	require.Empty(t, got.RolledTo, "RolledTo of a created key")

	plain := mustAPIKey(t, s, projA, "key_plain", base.Add(time.Second))
	got = mustGetAPIKey(t, s, projA, plain.ID)
	require.NotNil(t, got.Scopes, "GetAPIKey().Scopes of a key without scopes")
	require.Empty(t, got.Scopes, "GetAPIKey().Scopes of a key without scopes")
	wantZeroTime(t, got.ExpiresAt, "GetAPIKey().ExpiresAt of a permanent key")

	max := newAPIKey(projA, "key_max", base.Add(2*time.Second))
	for i := range store.MaxScopes {
		max.Scopes = append(max.Scopes, fmt.Sprintf("s%d", i))
	}
	require.NoErrorf(t, s.CreateAPIKey(t.Context(), max), "CreateAPIKey with %d scopes", store.MaxScopes)

	ks, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	require.Len(t, ks, 3)
	require.Equal(t, k.Scopes, ks[0].Scopes, "ListAPIKeys()[0].Scopes")
	wantTime(t, k.ExpiresAt, ks[0].ExpiresAt, "ListAPIKeys()[0].ExpiresAt")
	require.Equal(t, max.Scopes, ks[2].Scopes, "ListAPIKeys()[2].Scopes")
}

// CreateAPIKey refuses a bad scope name, too many scopes, a scope given
// twice and an expiry not after creation with ErrInvalid, and records
// nothing.
func testKeyInvalidScopes(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	many := make([]string, store.MaxScopes+1)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	cases := map[string]func(k *store.APIKey){
		"empty scope":           func(k *store.APIKey) { k.Scopes = []string{""} },
		"upper case":            func(k *store.APIKey) { k.Scopes = []string{"Contacts:read"} },
		"space":                 func(k *store.APIKey) { k.Scopes = []string{"contacts read"} },
		"slash":                 func(k *store.APIKey) { k.Scopes = []string{"contacts/read"} },
		"non-ASCII":             func(k *store.APIKey) { k.Scopes = []string{"contacts:lés"} },
		"too long":              func(k *store.APIKey) { k.Scopes = []string{strings.Repeat("a", store.MaxScopeLen+1)} },
		"given twice":           func(k *store.APIKey) { k.Scopes = []string{"a", "b", "a"} },
		"too many":              func(k *store.APIKey) { k.Scopes = many },
		"expiry at creation":    func(k *store.APIKey) { k.ExpiresAt = k.CreatedAt },
		"expiry before":         func(k *store.APIKey) { k.ExpiresAt = k.CreatedAt.Add(-time.Hour) },
		"rolled from on create": func(k *store.APIKey) { k.RolledFrom = "key_other" },
		"rolled to on create":   func(k *store.APIKey) { k.RolledTo = "key_other" },
	}
	for name, change := range cases {
		k := newAPIKey(projA, "key_bad", base)
		change(&k)
		require.ErrorIsf(t, s.CreateAPIKey(t.Context(), k), store.ErrInvalid, "CreateAPIKey with %s", name)
		_, err := s.GetAPIKey(t.Context(), projA, k.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey after CreateAPIKey with %s", name)
	}
	ks, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	require.Empty(t, ks, "ListAPIKeys after refused creates")
}

// ListAPIKeysPage pages the project's keys in (CreatedAt, ID) order with
// no duplicate or gap, and keeps only names with the prefix given.
func testKeyListPage(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	var want, wantBilling []string
	for i := range 9 {
		k := newAPIKey(projA, fmt.Sprintf("key_%02d", i), base.Add(time.Duration(i%4)*time.Second))
		k.Name = "search"
		if i%3 == 0 {
			k.Name = "billing " + k.ID
		}
		require.NoError(t, s.CreateAPIKey(t.Context(), k))
		require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k.ID, base.Add(time.Hour))) // revoked keys are listed
	}
	mustAPIKey(t, s, projB, "key_b", base)
	all, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	for _, k := range all {
		want = append(want, k.ID)
		if strings.HasPrefix(k.Name, "billing") {
			wantBilling = append(wantBilling, k.ID)
		}
	}
	walkKeys := func(prefix string) []string {
		var got []string
		req := paginate.Request{Limit: 2}
		for n := 0; ; n++ {
			require.Lessf(t, n, 20, "ListAPIKeysPage(%q) does not end", prefix)
			page, err := s.ListAPIKeysPage(t.Context(), projA, prefix, req)
			require.NoErrorf(t, err, "ListAPIKeysPage(%q, %+v)", prefix, req)
			require.LessOrEqual(t, len(page.Items), 2)
			for _, k := range page.Items {
				require.Equal(t, projA, k.ProjectID)
				got = append(got, k.ID)
			}
			if !page.HasMore {
				return got
			}
			last := page.Items[len(page.Items)-1]
			req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
		}
	}
	require.Equal(t, want, walkKeys(""), "ListAPIKeysPage with no prefix, page by page")
	require.Equal(t, wantBilling, walkKeys("billing"), "ListAPIKeysPage(\"billing\"), page by page")
	require.Empty(t, walkKeys("Billing"), "ListAPIKeysPage is case-sensitive")
	page, err := s.ListAPIKeysPage(t.Context(), "no-such-project", "", paginate.Request{Limit: 5})
	require.NoError(t, err)
	require.Empty(t, page.Items, "ListAPIKeysPage of an unknown project")
	_, err = s.ListAPIKeysPage(t.Context(), projA, "", paginate.Request{Limit: 0})
	require.ErrorIs(t, err, store.ErrInvalid, "ListAPIKeysPage with limit 0")
	_, err = s.ListAPIKeysPage(t.Context(), "Not A Slug", "", paginate.Request{Limit: 5})
	require.ErrorIs(t, err, store.ErrInvalid, "ListAPIKeysPage of a project id that is not a slug")
	_, err = s.NextScheduledRevocation(t.Context(), "Not A Slug")
	require.ErrorIs(t, err, store.ErrInvalid, "NextScheduledRevocation of a project id that is not a slug")
}

// RollAPIKey records the successor with the old key's name and scopes and
// RolledFrom, and schedules the old key's revocation: RolledTo and a
// RevokedAt after the roll, so the old key is valid until then.
func testKeyRoll(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := newAPIKey(projA, "key_old", base)
	k.Scopes = []string{"contacts:read"}
	k.ExpiresAt = base.Add(30 * 24 * time.Hour)
	require.NoError(t, s.CreateAPIKey(t.Context(), k))
	now, due := base.Add(time.Hour), base.Add(25*time.Hour)
	next := successorOf(k, "key_new", now.In(elsewhere))
	next.ExpiresAt = now.Add(30 * 24 * time.Hour)
	old, err := s.RollAPIKey(t.Context(), projA, k.ID, next, due)
	require.NoError(t, err, "RollAPIKey")
	require.Equal(t, next.ID, old.RolledTo, "RollAPIKey().RolledTo")
	wantTime(t, due, old.RevokesAt, "RollAPIKey().RevokesAt")
	wantZeroTime(t, old.RevokedAt, "RollAPIKey().RevokedAt with an overlap")

	got := mustGetAPIKey(t, s, projA, k.ID)
	require.Equal(t, next.ID, got.RolledTo, "GetAPIKey(old).RolledTo")
	wantTime(t, due, got.RevokesAt, "GetAPIKey(old).RevokesAt (the scheduled revocation)")
	wantZeroTime(t, got.RevokedAt, "GetAPIKey(old).RevokedAt during the overlap")
	require.Equal(t, k.Scopes, got.Scopes, "GetAPIKey(old).Scopes")
	require.True(t, got.ValidAt(now), "the old key is valid during the overlap")
	require.True(t, got.ValidAt(due.Add(-time.Microsecond)), "the old key is valid just before its revocation")
	require.False(t, got.ValidAt(due), "the old key is refused at its scheduled revocation")
	require.True(t, got.RevocationScheduled(now), "RevocationScheduled during the overlap")

	succ := mustGetAPIKey(t, s, projA, next.ID)
	require.Equal(t, k.ID, succ.RolledFrom, "GetAPIKey(successor).RolledFrom")
	require.Empty(t, succ.RolledTo)
	require.Equal(t, k.Name, succ.Name)
	require.Equal(t, k.Scopes, succ.Scopes)
	wantTime(t, now, succ.CreatedAt, "GetAPIKey(successor).CreatedAt")
	wantTime(t, next.ExpiresAt, succ.ExpiresAt, "GetAPIKey(successor).ExpiresAt")
	wantZeroTime(t, succ.RevokedAt, "GetAPIKey(successor).RevokedAt")

	// The successor may be rolled in its turn.
	_, err = s.RollAPIKey(t.Context(), projA, next.ID, successorOf(succ, "key_third", now.Add(time.Hour)), now.Add(2*time.Hour))
	require.NoError(t, err, "RollAPIKey of the successor")
}

// A revocation time at or before the roll revokes the old key at once,
// with its feed item, as RevokeAPIKey does.
func testKeyRollAtOnce(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_old", base)
	feed := newFeedTracker(t, s, projA)
	now := base.Add(time.Hour)
	_, err := s.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_new", now), now)
	require.NoError(t, err)
	got := mustGetAPIKey(t, s, projA, k.ID)
	require.False(t, got.ValidAt(now), "the old key after a roll with no overlap")
	wantTime(t, now, got.RevokedAt, "RevokedAt after a roll with no overlap")
	wantZeroTime(t, got.RevokesAt, "RevokesAt after a roll with no overlap")
	feed.added(t, store.RevokedAPIKey, k.ID, now, "RollAPIKey with no overlap")
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantZeroTime(t, next, "NextScheduledRevocation after a roll with no overlap")
}

// RollAPIKey refuses an unknown key, a revoked one, an expired one, one
// rolled already, a successor whose name or scopes differ or whose id
// exists, and changes nothing.
func testKeyRollRefused(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	now := base.Add(time.Hour)
	revoked := mustAPIKey(t, s, projA, "key_revoked", base)
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, revoked.ID, base.Add(time.Minute)))
	expired := newAPIKey(projA, "key_expired", base)
	expired.ExpiresAt = base.Add(time.Minute)
	require.NoError(t, s.CreateAPIKey(t.Context(), expired))
	rolled := mustAPIKey(t, s, projA, "key_rolled", base)
	_, err := s.RollAPIKey(t.Context(), projA, rolled.ID, successorOf(rolled, "key_rolled_next", now), now.Add(time.Hour))
	require.NoError(t, err)
	plain := newAPIKey(projA, "key_plain", base)
	plain.Scopes = []string{"contacts:read"}
	require.NoError(t, s.CreateAPIKey(t.Context(), plain))
	mustProject(t, s, projB)
	mustAPIKey(t, s, projB, "key_in_b", base)

	before, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	feed := newFeedTracker(t, s, projA)

	renamed := successorOf(plain, "key_x", now)
	renamed.Name = "another name"
	rescoped := successorOf(plain, "key_x", now)
	rescoped.Scopes = []string{"contacts:read", "identity:introspect"}
	cases := []struct {
		name string
		id   string
		next store.APIKey
		want error
	}{
		{"unknown key", "key_unknown", successorOf(plain, "key_x", now), store.ErrNotFound},
		{"key of another project", "key_in_b", successorOf(plain, "key_x", now), store.ErrNotFound},
		{"revoked key", revoked.ID, successorOf(revoked, "key_x", now), store.ErrRevoked},
		{"expired key", expired.ID, successorOf(expired, "key_x", now), store.ErrExpired},
		{"key rolled already", rolled.ID, successorOf(rolled, "key_x", now), store.ErrConflict},
		{"other name", plain.ID, renamed, store.ErrInvalid},
		{"other scopes", plain.ID, rescoped, store.ErrInvalid},
		{"existing successor id", plain.ID, successorOf(plain, revoked.ID, now), store.ErrConflict},
		{"successor in another project", plain.ID, func() store.APIKey { n := successorOf(plain, "key_x", now); n.ProjectID = projB; return n }(), store.ErrInvalid},
		{"successor with a bad scope", plain.ID, func() store.APIKey { n := successorOf(plain, "key_x", now); n.Scopes = []string{"BAD"}; return n }(), store.ErrInvalid},
	}
	for _, c := range cases {
		_, err := s.RollAPIKey(t.Context(), projA, c.id, c.next, now.Add(time.Hour))
		require.ErrorIsf(t, err, c.want, "RollAPIKey of the %s = %v, want %s", c.name, err, sentinelName(c.want))
	}
	_, err = s.RollAPIKey(t.Context(), projA, plain.ID, successorOf(plain, "key_x", now), time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "RollAPIKey with a zero revocation time")

	after, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	require.Len(t, after, len(before), "ListAPIKeys after refused rolls: a successor was created")
	for i := range before {
		wantAPIKey(t, before[i], after[i], "a key after refused rolls")
		require.Equalf(t, before[i].RolledTo, after[i].RolledTo, "RolledTo of %q after refused rolls", before[i].ID)
	}
	feed.unchanged(t, "refused rolls")
}

// A scheduled revocation is not in the feed before its time (by the clock
// of the listing process), and NextScheduledRevocation names its time.
func testKeyRollNotBefore(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	real := time.Now()
	k := mustAPIKey(t, s, projA, "key_old", real)
	other := mustAPIKey(t, s, projA, "key_other", real)
	due := real.Add(time.Hour)
	_, err := s.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_new", real), due)
	require.NoError(t, err)
	feed := newFeedTracker(t, s, projA)
	require.Empty(t, feed.items, "the feed right after a roll with an overlap of an hour")
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, due, next, "NextScheduledRevocation")
	nextB, err := s.NextScheduledRevocation(t.Context(), projB)
	require.NoError(t, err)
	wantZeroTime(t, nextB, "NextScheduledRevocation of another project")

	// A revocation before the scheduled time is listed alone.
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, other.ID, real.Add(time.Second)))
	feed.added(t, store.RevokedAPIKey, other.ID, real.Add(time.Second), "RevokeAPIKey during another key's overlap")
	next, err = s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, due, next, "NextScheduledRevocation after an earlier revocation")
}

// Once due, scheduled revocations join the feed at their own times, in
// time order, among immediate ones: a revocation added after a scheduled
// time places the scheduled item first.
func testKeyRollDue(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k1 := mustAPIKey(t, s, projA, "key_1", base)
	k2 := mustAPIKey(t, s, projA, "key_2", base)
	k3 := mustAPIKey(t, s, projA, "key_3", base)
	k4 := mustAPIKey(t, s, projA, "key_4", base)
	now := base.Add(10 * time.Minute)
	_, err := s.RollAPIKey(t.Context(), projA, k1.ID, successorOf(k1, "key_1_next", now), base.Add(2*time.Hour))
	require.NoError(t, err)
	_, err = s.RollAPIKey(t.Context(), projA, k2.ID, successorOf(k2, "key_2_next", now), base.Add(time.Hour))
	require.NoError(t, err)
	// Through a write: an immediate revocation at 30 min releases nothing,
	// one at 90 min releases key_2's first.
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k3.ID, base.Add(30*time.Minute)))
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k4.ID, base.Add(90*time.Minute)))
	// Through a listing: the real clock is days past base, so key_1's is
	// due too.
	items := feedList(s, projA).all(t)
	type item struct {
		subject string
		at      time.Time
	}
	want := []item{
		{k3.ID, base.Add(30 * time.Minute)},
		{k2.ID, base.Add(time.Hour)},
		{k4.ID, base.Add(90 * time.Minute)},
		{k1.ID, base.Add(2 * time.Hour)},
	}
	require.Len(t, items, len(want), "the feed once every scheduled revocation is due")
	for i, w := range want {
		require.Equalf(t, store.RevokedAPIKey, items[i].Kind, "item %d kind", i)
		require.Equalf(t, w.subject, items[i].Subject, "item %d subject", i)
		wantTime(t, w.at, items[i].RevokedAt, "item %d (%s) RevokedAt: the scheduled time", i, w.subject)
	}
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantZeroTime(t, next, "NextScheduledRevocation once all are listed")
	// Listed once: a second listing adds nothing.
	wantRevocations(t, items, feedList(s, projA).all(t), "the feed listed again")
}

// RevokeAPIKey during a roll's overlap revokes the old key at once: its
// scheduled item is replaced by one at the revocation time.
func testKeyRevokeDuringOverlap(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_old", base)
	now := base.Add(time.Hour)
	_, err := s.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_new", now), base.Add(24*time.Hour))
	require.NoError(t, err)
	at := base.Add(90 * time.Minute)
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at))
	got := mustGetAPIKey(t, s, projA, k.ID)
	wantTime(t, at, got.RevokedAt, "RevokedAt after a revocation during the overlap")
	wantZeroTime(t, got.RevokesAt, "RevokesAt after a revocation during the overlap")
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k.ID, base.Add(48*time.Hour)))
	wantTime(t, at, mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "RevokedAt after revoking again")
	items := feedList(s, projA).all(t) // the real clock is past the scheduled time
	require.Len(t, items, 1, "the feed: one item for the key, not the scheduled one as well")
	require.Equal(t, k.ID, items[0].Subject)
	wantTime(t, at, items[0].RevokedAt, "the item's RevokedAt")
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantZeroTime(t, next, "NextScheduledRevocation after the revocation")
}

// ListAPIKeysPage matches the name prefix literally, byte by byte: "_", "%"
// and a backslash only themselves, "é" neither "e" nor "É"; keys of one
// CreatedAt sort by id byte by byte ("key_B" before "key_a"); and a page
// that holds the last match says that no more follow.
func testKeyListPagePrefixes(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	for i, name := range []string{"a_b", "axb", "a%c", "abc", `a\d`, "é1", "e1", "É1", "ée"} {
		k := newAPIKey(projA, fmt.Sprintf("key_%d", i), base.Add(time.Duration(i)*time.Second))
		k.Name = name
		require.NoErrorf(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey named %q", name)
	}
	for _, id := range []string{"key_a", "key_B"} {
		k := newAPIKey(projA, id, base.Add(time.Minute))
		k.Name = "twin"
		require.NoErrorf(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey(%q)", id)
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"a_", []string{"key_0"}},
		{"a%", []string{"key_2"}},
		{`a\`, []string{"key_4"}},
		{"a", []string{"key_0", "key_1", "key_2", "key_3", "key_4"}},
		{"é", []string{"key_5", "key_8"}},
		{"e", []string{"key_6"}},
		{"É", []string{"key_7"}},
		{"twin", []string{"key_B", "key_a"}},
	} {
		page, err := s.ListAPIKeysPage(t.Context(), projA, c.prefix, paginate.Request{Limit: len(c.want)})
		require.NoErrorf(t, err, "ListAPIKeysPage(%q)", c.prefix)
		var got []string
		for _, k := range page.Items {
			got = append(got, k.ID)
		}
		require.Equalf(t, c.want, got, "ListAPIKeysPage(%q) with limit %d", c.prefix, len(c.want))
		require.Falsef(t, page.HasMore, "ListAPIKeysPage(%q) with limit %d: HasMore on the page that holds the last match", c.prefix, len(c.want))
	}
}

// CreateAPIKey keeps CreatedBy and SigningKeyID as given, and RollAPIKey
// records the successor's as CreateAPIKey does; every read returns them.
// RollAPIKey returns the old key as it is after the roll.
func testKeyCreatorAndSigner(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := newAPIKey(projA, "key_made", base)
	k.CreatedBy, k.SigningKeyID = "usr_creator", "sk_signer"
	require.NoError(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey with CreatedBy and SigningKeyID")
	next := successorOf(k, "key_rolled", base.Add(time.Hour))
	next.CreatedBy, next.SigningKeyID = "usr_roller", "sk_signer2"
	old, err := s.RollAPIKey(t.Context(), projA, k.ID, next, base.Add(time.Hour))
	require.NoError(t, err, "RollAPIKey with no overlap")
	after := mustGetAPIKey(t, s, projA, k.ID)
	require.Equal(t, after, old, "RollAPIKey's old key against GetAPIKey after the roll")
	wantTime(t, base.Add(time.Hour), old.RevokedAt, "the old key's RevokedAt, rolled with no overlap")
	wantZeroTime(t, old.RevokesAt, "the old key's RevokesAt, rolled with no overlap")
	require.Equal(t, next.ID, old.RolledTo, "the old key's RolledTo")

	want := map[string][2]string{k.ID: {k.CreatedBy, k.SigningKeyID}, next.ID: {next.CreatedBy, next.SigningKeyID}}
	check := func(got store.APIKey, what string) {
		t.Helper()
		w, ok := want[got.ID]
		require.Truef(t, ok, "%s: unexpected key %q", what, got.ID)
		require.Equalf(t, w, [2]string{got.CreatedBy, got.SigningKeyID}, "%s of %s: CreatedBy and SigningKeyID", what, got.ID)
	}
	for id := range want {
		check(mustGetAPIKey(t, s, projA, id), "GetAPIKey")
	}
	all, err := s.ListAPIKeys(t.Context(), projA)
	require.NoError(t, err)
	require.Len(t, all, 2, "ListAPIKeys")
	for _, got := range all {
		check(got, "ListAPIKeys")
	}
	page, err := s.ListAPIKeysPage(t.Context(), projA, "", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2, "ListAPIKeysPage")
	for _, got := range page.Items {
		check(got, "ListAPIKeysPage")
	}
}

// RevokeAPIKey of a key whose scheduled revocation is at or before the time
// given changes nothing: the key stops at its scheduled time, and the feed
// holds the one scheduled item.
func testKeyRevokeAfterScheduled(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_old", base)
	due := base.Add(24 * time.Hour)
	_, err := s.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_new", base.Add(time.Hour)), due)
	require.NoError(t, err)
	before := mustGetAPIKey(t, s, projA, k.ID)
	for _, at := range []time.Time{due, due.Add(time.Hour)} {
		require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at), "RevokeAPIKey at %s, the scheduled time %s", at, due)
		require.Equalf(t, before, mustGetAPIKey(t, s, projA, k.ID), "the key after RevokeAPIKey at %s: unchanged", at)
	}
	items := feedList(s, projA).all(t) // the real clock is past the scheduled time
	require.Len(t, items, 1, "the feed: the one scheduled item")
	require.Equal(t, k.ID, items[0].Subject)
	wantTime(t, due, items[0].RevokedAt, "the item's RevokedAt")
}

// Scheduled revocations that fall due behind an item already in the feed
// (a revocation at a later time, added before they were scheduled) are
// raised past it, in (time, subject) order: a reader who has seen that item
// still gets them.
func testKeyRollDueRaised(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	late := mustAPIKey(t, s, projA, "key_late", base)
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, late.ID, base.Add(3*time.Hour)))
	seen := feedList(s, projA).all(t)
	require.Len(t, seen, 1, "the feed before the rolls")
	now := base.Add(10 * time.Minute)
	for _, id := range []string{"key_b", "key_a", "key_c"} {
		k := mustAPIKey(t, s, projA, id, base)
		due := base.Add(time.Hour)
		if id == "key_c" {
			due = base.Add(2 * time.Hour)
		}
		_, err := s.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, id+"_next", now), due)
		require.NoErrorf(t, err, "RollAPIKey(%q)", id)
	}
	// The real clock is days past base: every scheduled one is due.
	items := feedList(s, projA).all(t)
	require.Len(t, items, 4, "the feed once the scheduled revocations are due")
	wantRevocations(t, seen, items[:1], "the item seen before")
	var got []string
	for i, it := range items[1:] {
		got = append(got, it.Subject)
		require.Truef(t, it.RevokedAt.After(items[i].RevokedAt) || it.RevokedAt.Equal(items[i].RevokedAt) && it.ID > items[i].ID,
			"item %d (%s, %s) sorts after item %d (%s, %s)", i+1, it.Subject, it.RevokedAt.Format(time.RFC3339Nano), i, items[i].Subject, items[i].RevokedAt.Format(time.RFC3339Nano))
		require.Lessf(t, it.RevokedAt.Sub(seen[0].RevokedAt), time.Second, "item %d (%s) raised just past the floor, not further", i+1, it.Subject)
	}
	require.Equal(t, []string{"key_a", "key_b", "key_c"}, got, "the raised items, in (time, subject) order")
	wantRevocations(t, items, feedList(s, projA).all(t), "the feed listed again")
}

// raceRoll rolls one key from many goroutines over the handles at once:
// exactly one roll succeeds, the others get ErrConflict, and the key has
// exactly one successor.
func raceRoll(t *testing.T, hs []store.Store) {
	s := hs[0]
	mustProject(t, s, projA)
	k := newAPIKey(projA, "key_raced", base)
	k.Scopes = []string{"contacts:read"}
	require.NoError(t, s.CreateAPIKey(t.Context(), k))
	const n = 8
	now := base.Add(time.Hour)
	nextID := func(i int) string { return fmt.Sprintf("key_next_%d", i) }
	errs := make([]error, n)
	tasks := make([]func(h store.Store), n)
	for i := range n {
		tasks[i] = func(h store.Store) {
			_, errs[i] = h.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, nextID(i), now), now.Add(24*time.Hour))
		}
	}
	raceTasks(hs, 28, tasks)
	winner := nextID(wantOneWinner(t, errs, "roll"))
	for _, h := range hs {
		ks, err := h.ListAPIKeys(t.Context(), projA)
		require.NoError(t, err)
		require.Len(t, ks, 2, "keys after the race: the key and one successor")
		require.Equal(t, winner, mustGetAPIKey(t, h, projA, k.ID).RolledTo, "RolledTo names the winner")
	}
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, now.Add(24*time.Hour), next, "one scheduled revocation")
}
