package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var _ store.CheckedContactLister = (*Store)(nil)

// The statement of ListContactsChecked: a UNION ALL of one part per record
// the token names (each a lookup on its primary key: one row, or none for a
// record that does not exist) and the rows of the page, the keyset query of
// ListContacts on the primary key. The parts' columns line up with the
// same types (tag, id, two binary columns, a name, a number and five
// times); the tag says what a row is. The signing key's name column holds
// its algorithm (migration 0002), the API key's fourth time its scheduled
// revocation (revokes_at, migration 0003); the API key's scopes, expiry and
// roll are left out, as store.CheckedContactLister allows. One statement is one InnoDB read view
// (one snapshot) and one round trip. UNION ALL promises no order across its
// rows, so the caller sorts the page.
const (
	checkedSigningKeySQL = `(SELECT 0, id, public_key, encrypted_private_key, alg, NULL,
	created_at, retired_at, NULL, NULL, NULL
	FROM signing_keys WHERE project_id = ? AND id = ?) UNION ALL `
	checkedAPIKeySQL = `(SELECT 1, id, created_by, signing_key_id, name, NULL,
	created_at, last_used_at, revoked_at, revokes_at, NULL
	FROM api_keys WHERE project_id = ? AND id = ?) UNION ALL `
	checkedSessionSQL = `(SELECT 2, id, user_id, NULL, NULL, generation,
	created_at, issued_at, expires_at, ends_at, revoked_at
	FROM refresh_families WHERE project_id = ? AND id = ?) UNION ALL `
	checkedPageSQL = `(SELECT 3, id, NULL, NULL, name, NULL,
	created_at, NULL, NULL, NULL, NULL
	FROM contacts WHERE project_id = ?`
	checkedAfterSQL = listContactsAfterSQL
	checkedOrderSQL = ` ORDER BY pos LIMIT ?)`
)

// The tags of the rows of the statement of ListContactsChecked.
const (
	tagSigningKey = 0
	tagAPIKey     = 1
	tagSession    = 2
	tagContact    = 3
)

// checkedSQL returns the statement of ListContactsChecked reading the
// records ids names and the page of fetch rows after the cursor, and its
// arguments.
func checkedSQL(projectID string, ids store.TokenRecordIDs, after paginate.Cursor, fetch int) (string, []any) {
	var b strings.Builder
	var args []any
	for _, part := range []struct{ sql, id string }{
		{checkedSigningKeySQL, ids.SigningKeyID}, {checkedAPIKeySQL, ids.APIKeyID}, {checkedSessionSQL, ids.SessionID},
	} {
		if part.id != "" {
			b.WriteString(part.sql)
			args = append(args, projectID, part.id)
		}
	}
	b.WriteString(checkedPageSQL)
	args = append(args, projectID)
	if !after.IsZero() {
		b.WriteString(checkedAfterSQL)
		args = append(args, position(after.CreatedAt, after.ID))
	}
	b.WriteString(checkedOrderSQL)
	return b.String(), append(args, fetch)
}

// ListContactsChecked returns the page ListContacts returns and the records
// ids names, read by one statement: one snapshot and one round trip. See
// [store.CheckedContactLister].
func (s *Store) ListContactsChecked(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
	const op = "list contacts checked"
	if err := store.CheckListContacts(projectID, req); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	if err := store.CheckTokenRecordIDs(projectID, ids); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	limit, fetch := pageSize(req)
	query, args := checkedSQL(projectID, ids, req.After, fetch)

	var recs store.TokenRecords
	var items []store.Contact
	err := s.queryPrepared(ctx, op, query, args, func() {
		recs = store.TokenRecords{}
		items = make([]store.Contact, 0, min(fetch, paginate.MaxLimit+1))
	}, func(rows *sql.Rows) error {
		var r checkedRow
		if err := rows.Scan(r.dest()...); err != nil {
			return err
		}
		switch r.tag {
		case tagContact:
			items = append(items, store.Contact{ID: r.id, ProjectID: projectID, Name: r.name.String, CreatedAt: fromNull(r.t[0])})
		case tagSigningKey:
			recs.SigningKey = &store.SigningKey{ID: r.id, ProjectID: projectID, Algorithm: r.name.String,
				PublicKey: r.b1, EncryptedPrivateKey: r.b2,
				CreatedAt: fromNull(r.t[0]), RetiredAt: fromNull(r.t[1])}
		case tagAPIKey:
			recs.APIKey = &store.APIKey{ID: r.id, ProjectID: projectID, Name: r.name.String,
				CreatedBy: string(r.b1), SigningKeyID: string(r.b2),
				CreatedAt: fromNull(r.t[0]), LastUsedAt: fromNull(r.t[1]), RevokedAt: fromNull(r.t[2]),
				RevokesAt: fromNull(r.t[3])}
		case tagSession:
			recs.Session = &store.RefreshFamily{ID: r.id, ProjectID: projectID, UserID: string(r.b1), Generation: r.n.Int64,
				CreatedAt: fromNull(r.t[0]), IssuedAt: fromNull(r.t[1]), ExpiresAt: fromNull(r.t[2]),
				EndsAt: fromNull(r.t[3]), RevokedAt: fromNull(r.t[4])}
		}
		return nil
	})
	if err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, err
	}
	slices.SortFunc(items, func(a, b store.Contact) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.ID), []byte(b.ID))
	})
	return recs, paginate.PageOf(items, limit), nil
}

// checkedRow is one row of the statement of ListContactsChecked.
type checkedRow struct {
	tag    int
	id     string
	b1, b2 []byte
	name   sql.NullString
	n      sql.NullInt64
	t      [5]sql.NullTime
}

func (r *checkedRow) dest() []any {
	return []any{&r.tag, &r.id, &r.b1, &r.b2, &r.name, &r.n, &r.t[0], &r.t[1], &r.t[2], &r.t[3], &r.t[4]}
}
