package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var _ store.CheckedContactLister = (*Store)(nil)

// The pieces of the statement of ListContactsChecked (see checkedSQL). Its
// first row holds the token's records, read by primary key, each a LEFT
// JOIN on a one-row relation so that a missing record is NULLs rather than
// no row; a record not asked for is not joined at all, its columns NULL.
// That row's first column is true. The page's rows follow, their first
// column false and the records' columns NULL, so that no row repeats the
// records. The page is the keyset query of ListContacts
// (listContactsFirstSQL and listContactsAfterSQL) on the contacts_keyset
// index; a UNION ALL promises no order across its rows, so the caller
// sorts them.
const (
	checkedSigningKeyCols = `sk.id, sk.public_key, sk.encrypted_private_key, sk.created_at, sk.retired_at`
	checkedAPIKeyCols     = `ak.id, ak.name, ak.created_by, ak.signing_key_id, ak.created_at, ak.last_used_at, ak.revoked_at`
	checkedAPIKeyNulls    = `NULL::text, NULL::text, NULL::text, NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz`
	checkedSessionCols    = `f.id, f.user_id, f.generation, f.issued_at, f.expires_at, f.created_at, f.ends_at, f.revoked_at`
	checkedSessionNulls   = `NULL::text, NULL::text, NULL::bigint, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz`
	checkedPageNulls      = `NULL::text, NULL::text, NULL::timestamptz`
	checkedFromSQL        = `
	FROM (SELECT) one
	LEFT JOIN signing_keys sk ON sk.project_id = $1 AND sk.id = $2`
	checkedAPIKeyJoin = `
	LEFT JOIN api_keys ak ON ak.project_id = $1 AND ak.id = $`
	checkedSessionJoin = `
	LEFT JOIN refresh_families f ON f.project_id = $1 AND f.id = $`
	checkedPageSQL = `
	UNION ALL (SELECT false,
	NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	id, name, created_at FROM contacts
	WHERE project_id = $1`
	checkedOrderSQL = `
	ORDER BY created_at, id LIMIT `
)

// checkedSQL returns the statement of ListContactsChecked reading the
// records ids names and fetch rows of the page, from the start or after a
// cursor, and its arguments.
//
// The LIMIT is a constant of the text, not a parameter: with a parameter,
// PostgreSQL's plan cache costs the generic plan for a tenth of the table,
// finds it dearer than a custom plan and plans the statement again at every
// execution; with a constant the generic plan costs the same and is kept
// after five runs. The texts (per kind of token and page size, a few
// hundred at most) are prepared once per connection by pgx's statement
// cache.
func checkedSQL(projectID string, ids store.TokenRecordIDs, after paginate.Cursor, fetch int) (string, []any) {
	var b strings.Builder
	b.Grow(1024)
	args := make([]any, 2, 6)
	args[0], args[1] = projectID, ids.SigningKeyID
	b.WriteString("SELECT true, " + checkedSigningKeyCols + ",\n\t")
	apiKey, session := ids.APIKeyID != "", ids.SessionID != ""
	if apiKey {
		b.WriteString(checkedAPIKeyCols)
	} else {
		b.WriteString(checkedAPIKeyNulls)
	}
	b.WriteString(",\n\t")
	if session {
		b.WriteString(checkedSessionCols)
	} else {
		b.WriteString(checkedSessionNulls)
	}
	b.WriteString(",\n\t" + checkedPageNulls + checkedFromSQL)
	if apiKey {
		args = append(args, ids.APIKeyID)
		b.WriteString(checkedAPIKeyJoin + strconv.Itoa(len(args)))
	}
	if session {
		args = append(args, ids.SessionID)
		b.WriteString(checkedSessionJoin + strconv.Itoa(len(args)))
	}
	b.WriteString(checkedPageSQL)
	if !after.IsZero() {
		n := len(args)
		fmt.Fprintf(&b, " AND (created_at, id) > ($%d, $%d)", n+1, n+2)
		args = append(args, dbTime(after.CreatedAt), after.ID)
	}
	b.WriteString(checkedOrderSQL + strconv.Itoa(fetch) + ")")
	return b.String(), args
}

// ListContactsChecked returns the page ListContacts returns and the records
// ids names, read by one statement: one snapshot, and one round trip, which
// concurrent calls share (the statement is pipelined, see pipeline.go). See
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
	sql, args := checkedSQL(projectID, ids, req.After, fetch)
	var (
		recs  store.TokenRecords
		items []store.Contact
	)
	err := s.readPipelined(ctx, op, func() {
		recs, items = store.TokenRecords{}, make([]store.Contact, 0, min(fetch, paginate.MaxLimit+1))
	}, pipelinedStatement{sql: sql, args: args, scan: func(rows pgx.Rows) error {
		var row checkedRow
		dest := row.dest()
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			switch {
			case row.isRecords:
				recs = row.records(projectID)
				// No other row holds records: skip their columns.
				clear(dest[1 : len(dest)-3])
			case row.cID.Valid:
				items = append(items, store.Contact{ProjectID: projectID, ID: row.cID.String, Name: row.cName.String, CreatedAt: row.cAt.Time.UTC()})
			}
		}
		return rows.Err()
	}})
	if err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, err
	}
	// Nearly always sorted already: a check of each neighbour.
	if !slices.IsSortedFunc(items, compareContacts) {
		slices.SortFunc(items, compareContacts)
	}
	return recs, paginate.PageOf(items, limit), nil
}

// compareContacts orders contacts as the list does: by CreatedAt, then ID
// byte by byte.
func compareContacts(a, b store.Contact) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// checkedRow is one row of checkedFirstSQL or checkedAfterSQL.
type checkedRow struct {
	isRecords                    bool
	skID                         pgtype.Text
	skPub, skSealed              []byte
	skAt, skRetired              pgtype.Timestamptz
	akID, akName, akBy, akSigner pgtype.Text
	akAt, akUsed, akRevoked      pgtype.Timestamptz
	fID, fUser                   pgtype.Text
	fGen                         pgtype.Int8
	fIssued, fExpires, fAt       pgtype.Timestamptz
	fEnds, fRevoked              pgtype.Timestamptz
	cID, cName                   pgtype.Text
	cAt                          pgtype.Timestamptz
}

// dest returns the scan destinations of the row's columns, in order; the
// page's three come last.
func (r *checkedRow) dest() []any {
	return []any{
		&r.isRecords,
		&r.skID, &r.skPub, &r.skSealed, &r.skAt, &r.skRetired,
		&r.akID, &r.akName, &r.akBy, &r.akSigner, &r.akAt, &r.akUsed, &r.akRevoked,
		&r.fID, &r.fUser, &r.fGen, &r.fIssued, &r.fExpires, &r.fAt, &r.fEnds, &r.fRevoked,
		&r.cID, &r.cName, &r.cAt,
	}
}

// records returns the records of the row, nil where the join found none.
func (r *checkedRow) records(projectID string) store.TokenRecords {
	var recs store.TokenRecords
	if r.skID.Valid {
		recs.SigningKey = &store.SigningKey{
			ID: r.skID.String, ProjectID: projectID, PublicKey: r.skPub, EncryptedPrivateKey: r.skSealed,
			CreatedAt: r.skAt.Time.UTC(), RetiredAt: fromNullDBTime(r.skRetired),
		}
	}
	if r.akID.Valid {
		recs.APIKey = &store.APIKey{
			ID: r.akID.String, ProjectID: projectID, Name: r.akName.String, CreatedBy: r.akBy.String,
			SigningKeyID: r.akSigner.String, CreatedAt: r.akAt.Time.UTC(),
			LastUsedAt: fromNullDBTime(r.akUsed), RevokedAt: fromNullDBTime(r.akRevoked),
		}
	}
	if r.fID.Valid {
		recs.Session = &store.RefreshFamily{
			ID: r.fID.String, ProjectID: projectID, UserID: r.fUser.String, Generation: r.fGen.Int64,
			IssuedAt: r.fIssued.Time.UTC(), ExpiresAt: r.fExpires.Time.UTC(), CreatedAt: r.fAt.Time.UTC(),
			EndsAt: fromNullDBTime(r.fEnds), RevokedAt: fromNullDBTime(r.fRevoked),
		}
	}
	return recs
}
