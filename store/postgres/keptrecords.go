package postgres

import (
	"bytes"
	"sync"

	"github.com/latchkey-dev/latchkey/store"
)

// keptRecords holds, for each token ListContactsChecked served lately, the
// token's records as the last statement that read them saw them, and that
// statement's snapshot (pg_current_snapshot() as text). The next statement
// for the token passes that snapshot, and reads the records again
// (latchkey_token_records, migration 0003) only when its own snapshot is
// another. Two snapshots with the same xmin, xmax and list of transactions
// in progress see exactly the same committed transactions, so when they
// are equal the records kept are exactly the ones the statement would
// read, in the snapshot of its page. Reusing them is therefore not a cache
// that can be stale: any write committed anywhere on the server (in this
// database or another) changes the snapshot of every later statement.
//
// It holds at most maxKeptTokens tokens; when a new one would exceed that,
// it forgets them all (each is read again at its next use). An entry is
// never changed once made, so a statement uses the entry whose snapshot it
// sent, whatever other statements store meanwhile.
type keptRecords struct {
	mu      sync.Mutex
	entries map[keptKey]*keptEntry
}

// keptKey names a token: ids are unique only within a project.
type keptKey struct {
	projectID string
	ids       store.TokenRecordIDs
}

// maxKeptTokens bounds the tokens keptRecords holds.
const maxKeptTokens = 10_000

// keptEntry is the records of one token and the snapshot they were read in.
type keptEntry struct {
	snapshot string
	recs     store.TokenRecords
}

// get returns the entry of key, or nil.
func (k *keptRecords) get(key keptKey) *keptEntry {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.entries[key]
}

// put makes e the entry of key.
func (k *keptRecords) put(key keptKey, e *keptEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.entries[key]; !ok && len(k.entries) >= maxKeptTokens {
		k.entries = nil
	}
	if k.entries == nil {
		k.entries = make(map[keptKey]*keptEntry)
	}
	k.entries[key] = e
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
