package postgres

import (
	"context"
	"errors"
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
// first row holds true, the statement's state ("identity snapshot": the
// identity of the session it runs on, see identity.go, and its snapshot as
// text) and the token's records (latchkey_token_records, migration 0003),
// or NULL instead of the records when the state is $5, the one the records
// kept were read in (see keptRecords), the session has an identity, and
// the server is a primary: a hot standby's snapshot lists the transactions
// in progress elsewhere than pg_current_snapshot shows, so there the
// records are always read. Its page columns are empty. The page's rows
// follow, their first column false and the state and records NULL. The
// page is the keyset query of ListContacts (listContactsFirstSQL and
// listContactsAfterSQL) on the contacts_keyset index; a UNION ALL promises
// no order across its rows, so the caller sorts them.
const (
	checkedRecordsSQL = `SELECT true, st.state,
	CASE WHEN st.id <> '' AND st.state = $5 AND NOT pg_is_in_recovery() THEN NULL
	ELSE latchkey_token_records($1, $2, $3, $4) END,
	'', '', NULL::timestamptz
	FROM (SELECT i.id, i.id || ' ' || pg_current_snapshot()::text AS state
		FROM (SELECT ` + sessionIdentitySQL + ` AS id) i) st
	UNION ALL (SELECT false, NULL, NULL, id, name, created_at FROM contacts
	WHERE project_id = $1`
	checkedAfterSQL = ` AND (created_at, id) > ($6, $7)`
	checkedOrderSQL = `
	ORDER BY created_at, id LIMIT `
)

// checkedSQL returns the statement of ListContactsChecked reading the page
// of fetch rows from the start or after a cursor, and its arguments: the
// records ids names are read unless state is the statement's own.
//
// The LIMIT is a constant of the text, not a parameter: with a parameter,
// PostgreSQL's plan cache costs the generic plan for a tenth of the table,
// finds it dearer than a custom plan and plans the statement again at every
// execution; with a constant the generic plan costs the same and is kept
// after five runs. The texts (per page size and cursor or none, a few
// hundred at most) are prepared once per connection by pgx's statement
// cache.
func checkedSQL(projectID string, ids store.TokenRecordIDs, state string, after paginate.Cursor, fetch int) (string, []any) {
	args := []any{projectID, ids.SigningKeyID, ids.APIKeyID, ids.SessionID, state}
	sql := checkedRecordsSQL
	if !after.IsZero() {
		sql += checkedAfterSQL
		args = append(args, dbTime(after.CreatedAt), after.ID)
	}
	return sql + checkedOrderSQL + strconv.Itoa(fetch) + ")", args
}

// ListContactsChecked returns the page ListContacts returns and the records
// ids names, read by one statement: one snapshot, and one round trip, which
// concurrent calls share (the statement is pipelined, see pipeline.go).
// The statement reads the records only when its state (the database's
// identity and its snapshot) differs from the one they were last read in
// (see keptRecords). See [store.CheckedContactLister].
func (s *Store) ListContactsChecked(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
	const op = "list contacts checked"
	if err := store.CheckListContacts(projectID, req); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	if err := store.CheckTokenRecordIDs(projectID, ids); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	key := keptKey{projectID, ids}
	kept := s.kept.get(key)
	known := ""
	if kept != nil {
		known = kept.state
	}
	limit, fetch := pageSize(req)
	sql, args := checkedSQL(projectID, ids, known, req.After, fetch)
	var a checkedAnswer
	err := s.readPipelined(ctx, op, func() {
		a = checkedAnswer{items: make([]store.Contact, 0, min(fetch, paginate.MaxLimit+1))}
	}, pipelinedStatement{sql: sql, args: args, scan: func(rows pgx.Rows) error {
		return a.scan(rows, projectID)
	}})
	if err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, err
	}
	var recs store.TokenRecords
	switch {
	case a.recs != nil:
		if id := stateIdentity(a.state); id != "" {
			s.sawIdentity(id)
			s.kept.put(key, &keptEntry{state: a.state, recs: *a.recs})
		}
		recs = copyRecords(*a.recs)
	case kept != nil && a.state == known && stateIdentity(known) != "":
		recs = copyRecords(kept.recs) // its state is the statement's
	default:
		// Only the state passed in leaves the records NULL: fail
		// closed if anything else did.
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, wrap(op, errBadRecordsRow)
	}
	items := a.items
	// Nearly always sorted already: a check of each neighbour.
	if !slices.IsSortedFunc(items, compareContacts) {
		slices.SortFunc(items, compareContacts)
	}
	return recs, paginate.PageOf(items, limit), nil
}

// checkedAnswer is what ListContactsChecked's statement returned.
type checkedAnswer struct {
	state string              // the statement's state, "identity snapshot"
	recs  *store.TokenRecords // nil when the statement left them NULL
	items []store.Contact     // the page's rows, in the order they came
}

// scan reads the statement's rows into a. It fails with errBadRecordsRow
// unless exactly one records row came, with a state and a record of
// recordsRow's fields or NULL.
func (a *checkedAnswer) scan(rows pgx.Rows, projectID string) error {
	var (
		isRecords bool
		state     pgtype.Text
		recs      tokenRecordsField
		id, name  string
		at        pgtype.Timestamptz
		seen      bool
	)
	dest := []any{&isRecords, &state, &recs, &id, &name, &at}
	for rows.Next() {
		recs.null = false // a page row before the records row sets it
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if !isRecords {
			a.items = append(a.items, store.Contact{ProjectID: projectID, ID: id, Name: name, CreatedAt: at.Time.UTC()})
			continue
		}
		if seen || !state.Valid || state.String == "" {
			return errBadRecordsRow
		}
		if !recs.null {
			if recs.scanned != len(recs.fields) || !recs.row.present {
				return errBadRecordsRow
			}
			r := recs.row.records(projectID)
			a.recs = &r
		}
		a.state, seen = state.String, true
		// No other row holds the state or records.
		dest[1], dest[2] = nil, nil
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !seen {
		return errBadRecordsRow
	}
	return nil
}

// errBadRecordsRow is the error of a checked read whose answer has no
// row of the state and records, more than one, one whose record has
// other fields than recordsRow, or one that says records it was not given
// are current.
var errBadRecordsRow = errors.New("postgres: the checked read returned no usable row of token records")

// compareContacts orders contacts as the list does: by CreatedAt, then ID
// byte by byte.
func compareContacts(a, b store.Contact) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// tokenRecordsField scans the record latchkey_token_records returns: NULL
// when the records kept are current, else the token's records.
type tokenRecordsField struct {
	null    bool
	row     recordsRow
	fields  []any // row's fields, in the function's order
	scanned int   // the fields the record had
}

// ScanNull implements pgtype.CompositeIndexScanner.
func (f *tokenRecordsField) ScanNull() error {
	f.null = true
	return nil
}

// ScanIndex implements pgtype.CompositeIndexScanner.
func (f *tokenRecordsField) ScanIndex(i int) any {
	if f.fields == nil {
		f.fields = f.row.dest()
	}
	f.scanned = i + 1
	if i >= len(f.fields) {
		return nil // the field is skipped, and scanned tells
	}
	return f.fields[i]
}

// recordsRow is the record latchkey_token_records returns: true, then the
// columns of the signing key, the API key and the session, then the API
// key's scheduled revocation, each NULL where the join found no row.
type recordsRow struct {
	present                      bool
	skID                         pgtype.Text
	skPub, skSealed              []byte
	skAt, skRetired              pgtype.Timestamptz
	skAlg                        pgtype.Text
	akID, akName, akBy, akSigner pgtype.Text
	akAt, akUsed, akRevoked      pgtype.Timestamptz
	fID, fUser                   pgtype.Text
	fGen                         pgtype.Int8
	fIssued, fExpires, fAt       pgtype.Timestamptz
	fEnds, fRevoked              pgtype.Timestamptz
	akRevokes                    pgtype.Timestamptz // migration 0005
}

// dest returns the scan destinations of the row's fields, in order.
func (r *recordsRow) dest() []any {
	return []any{
		&r.present,
		&r.skID, &r.skPub, &r.skSealed, &r.skAt, &r.skRetired, &r.skAlg,
		&r.akID, &r.akName, &r.akBy, &r.akSigner, &r.akAt, &r.akUsed, &r.akRevoked,
		&r.fID, &r.fUser, &r.fGen, &r.fIssued, &r.fExpires, &r.fAt, &r.fEnds, &r.fRevoked,
		&r.akRevokes,
	}
}

// records returns the records of the row, nil where the join found none.
func (r *recordsRow) records(projectID string) store.TokenRecords {
	var recs store.TokenRecords
	if r.skID.Valid {
		recs.SigningKey = &store.SigningKey{
			ID: r.skID.String, ProjectID: projectID, Algorithm: r.skAlg.String,
			PublicKey: r.skPub, EncryptedPrivateKey: r.skSealed,
			CreatedAt: r.skAt.Time.UTC(), RetiredAt: fromNullDBTime(r.skRetired),
		}
	}
	if r.akID.Valid {
		recs.APIKey = &store.APIKey{
			ID: r.akID.String, ProjectID: projectID, Name: r.akName.String, CreatedBy: r.akBy.String,
			SigningKeyID: r.akSigner.String, CreatedAt: r.akAt.Time.UTC(),
			LastUsedAt: fromNullDBTime(r.akUsed), RevokedAt: fromNullDBTime(r.akRevoked),
			RevokesAt: fromNullDBTime(r.akRevokes),
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
