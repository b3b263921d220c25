package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"slices"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var _ store.CheckedContactLister = (*Store)(nil)

// The statement of ListContactsChecked: a UNION ALL of one row holding the
// token's records (each LEFT JOINed on its primary key, so a record that
// does not exist is NULLs) and the rows of the page, the keyset query of
// ListContacts on contacts_keyset. Each part's columns line up with the
// same types: a page row carries its contact's id, name and created_at in
// the API key's id, name and created_at columns, the rest NULL. One
// statement is one InnoDB read view (one snapshot) and one round trip.
// UNION ALL promises no order across its rows, so the caller sorts the
// page.
const (
	checkedRecordsSQL = `(SELECT 0,
	sk.id, sk.public_key, sk.encrypted_private_key, sk.created_at, sk.retired_at,
	ak.id, ak.name, ak.created_by, ak.signing_key_id, ak.created_at, ak.last_used_at, ak.revoked_at,
	f.id, f.user_id, f.generation, f.issued_at, f.expires_at, f.created_at, f.ends_at, f.revoked_at
	FROM (SELECT 1 AS one) one
	LEFT JOIN signing_keys sk ON sk.project_id = ? AND sk.id = ?
	LEFT JOIN api_keys ak ON ak.project_id = ? AND ak.id = ?
	LEFT JOIN refresh_families f ON f.project_id = ? AND f.id = ?)
	UNION ALL (SELECT 1,
	NULL, NULL, NULL, NULL, NULL,
	id, name, NULL, NULL, created_at, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
	FROM contacts WHERE project_id = ?`
	checkedAfterSQL = ` AND (created_at > ? OR (created_at = ? AND id > ?))`
	checkedOrderSQL = ` ORDER BY created_at, id LIMIT %d)`
)

// ListContactsChecked returns the page ListContacts returns and the records
// ids names, read by one statement: one snapshot and one round trip. See
// [store.CheckedContactLister].
func (s *Store) ListContactsChecked(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
	const op = "list contacts checked"
	if err := checkList(projectID, req); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	if err := store.CheckTokenRecordIDs(projectID, ids); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	limit, fetch := pageSize(req)
	query := checkedRecordsSQL
	args := []any{projectID, ids.SigningKeyID, projectID, ids.APIKeyID, projectID, ids.SessionID, projectID}
	if !req.After.IsZero() {
		t := dbTime(req.After.CreatedAt)
		query += checkedAfterSQL
		args = append(args, t, t, req.After.ID)
	}
	query += sprintf(checkedOrderSQL, fetch)

	var recs store.TokenRecords
	var items []store.Contact
	err := s.read(ctx, op, func(q querier) error {
		recs = store.TokenRecords{}
		items = make([]store.Contact, 0, min(fetch, paginate.MaxLimit+1))
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r checkedRow
			if err := rows.Scan(r.dest()...); err != nil {
				return err
			}
			if r.page {
				items = append(items, store.Contact{ID: r.akID.String, ProjectID: projectID,
					Name: r.akName.String, CreatedAt: fromNull(r.akCreated)})
				continue
			}
			recs = r.records(projectID, ids)
		}
		return rows.Err()
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
	page                                   bool
	skID                                   sql.NullString
	skPub, skPriv                          []byte
	skCreated, skRetired                   sql.NullTime
	akID, akName, akCreatedBy, akSigningID sql.NullString
	akCreated, akUsed, akRevoked           sql.NullTime
	fID, fUser                             sql.NullString
	fGen                                   sql.NullInt64
	fIssued, fExpires, fCreated, fEnds     sql.NullTime
	fRevoked                               sql.NullTime
}

func (r *checkedRow) dest() []any {
	return []any{&r.page,
		&r.skID, &r.skPub, &r.skPriv, &r.skCreated, &r.skRetired,
		&r.akID, &r.akName, &r.akCreatedBy, &r.akSigningID, &r.akCreated, &r.akUsed, &r.akRevoked,
		&r.fID, &r.fUser, &r.fGen, &r.fIssued, &r.fExpires, &r.fCreated, &r.fEnds, &r.fRevoked}
}

// records returns the records of the row: a nil field for each record not
// found (or not asked for).
func (r *checkedRow) records(projectID string, ids store.TokenRecordIDs) store.TokenRecords {
	var recs store.TokenRecords
	if r.skID.Valid && ids.SigningKeyID != "" {
		recs.SigningKey = &store.SigningKey{ID: r.skID.String, ProjectID: projectID,
			PublicKey: r.skPub, EncryptedPrivateKey: r.skPriv,
			CreatedAt: fromNull(r.skCreated), RetiredAt: fromNull(r.skRetired)}
	}
	if r.akID.Valid && ids.APIKeyID != "" {
		recs.APIKey = &store.APIKey{ID: r.akID.String, ProjectID: projectID, Name: r.akName.String,
			CreatedBy: r.akCreatedBy.String, SigningKeyID: r.akSigningID.String,
			CreatedAt: fromNull(r.akCreated), LastUsedAt: fromNull(r.akUsed), RevokedAt: fromNull(r.akRevoked)}
	}
	if r.fID.Valid && ids.SessionID != "" {
		recs.Session = &store.RefreshFamily{ID: r.fID.String, ProjectID: projectID, UserID: r.fUser.String,
			Generation: r.fGen.Int64, IssuedAt: fromNull(r.fIssued), ExpiresAt: fromNull(r.fExpires),
			CreatedAt: fromNull(r.fCreated), EndsAt: fromNull(r.fEnds), RevokedAt: fromNull(r.fRevoked)}
	}
	return recs
}
