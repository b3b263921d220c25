package postgres

import (
	"bytes"
	"strings"
	"sync"

	"github.com/latchkey-dev/latchkey/store"
)

// keptRecords holds, for each token ListContactsChecked served lately, the
// token's records as the last statement that read them saw them, and that
// statement's state: the identity of the database its session was opened
// on (see identity.go) and its snapshot (pg_current_snapshot() as text),
// as "identity snapshot". The next statement for the token passes that
// state, and reads the records again (latchkey_token_records, migration
// 0003) unless its own state is the same. Two snapshots of one database
// with the same xmin, xmax and list of transactions in progress see exactly
// the same committed transactions, so when the states are equal the records
// kept are exactly the ones the statement would read, in the snapshot of
// its page. Reusing them is therefore not a cache that can be stale: any
// write committed anywhere on the server (in this database or another)
// changes the snapshot of every later statement.
//
// A snapshot's text alone would not do: a promoted standby hands out again
// the transaction ids its old primary handed out after the last one it
// replayed, so one of its snapshots can repeat the text of one of the old
// primary's that saw other commits (a key that was revoked since, say). The
// identity tells them apart. A session without an identity (opened during
// recovery, or whose identity could not be read) has states that are never
// kept, and its statements always read the records.
//
// It holds at most maxKeptTokens tokens; when a new one would exceed that,
// it forgets them all (each is read again at its next use). It also forgets
// them all when it is given an entry of another identity than the last
// one's, and when the store sees a connection of another identity (reset).
// An entry is never changed once made, so a statement uses the entry whose
// state it sent, whatever other statements store meanwhile.
type keptRecords struct {
	mu       sync.Mutex
	entries  map[keptKey]*keptEntry
	identity string // of every entry
}

// keptKey names a token: ids are unique only within a project.
type keptKey struct {
	projectID string
	ids       store.TokenRecordIDs
}

// maxKeptTokens bounds the tokens keptRecords holds.
const maxKeptTokens = 10_000

// keptEntry is the records of one token and the state ("identity
// snapshot") they were read in.
type keptEntry struct {
	state string
	recs  store.TokenRecords
}

// stateIdentity returns the identity part of a statement's state, "" when
// its session has none.
func stateIdentity(state string) string {
	id, _, _ := strings.Cut(state, " ")
	return id
}

// get returns the entry of key, or nil.
func (k *keptRecords) get(key keptKey) *keptEntry {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.entries[key]
}

// put makes e the entry of key, unless e's state has no identity. An entry
// of another identity than the entries held replaces them all.
func (k *keptRecords) put(key keptKey, e *keptEntry) {
	id := stateIdentity(e.state)
	if id == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if id != k.identity {
		k.entries, k.identity = nil, id
	}
	if _, ok := k.entries[key]; !ok && len(k.entries) >= maxKeptTokens {
		k.entries = nil
	}
	if k.entries == nil {
		k.entries = make(map[keptKey]*keptEntry)
	}
	k.entries[key] = e
}

// reset forgets every entry.
func (k *keptRecords) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.entries, k.identity = nil, ""
}

// copyRecords returns a copy of recs that shares no memory with it, so that
// a caller changing what it was given cannot change what is kept.
func copyRecords(recs store.TokenRecords) store.TokenRecords {
	var c store.TokenRecords
	if recs.SigningKey != nil {
		sk := *recs.SigningKey
		sk.PublicKey = bytes.Clone(sk.PublicKey)
		sk.EncryptedPrivateKey = bytes.Clone(sk.EncryptedPrivateKey)
		c.SigningKey = &sk
	}
	if recs.APIKey != nil {
		ak := *recs.APIKey
		c.APIKey = &ak
	}
	if recs.Session != nil {
		f := *recs.Session
		c.Session = &f
	}
	return c
}
