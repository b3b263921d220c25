package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// lockContactsSQL serializes contact inserts per project: the row lock
	// is held until the inserting transaction ends, so the high-water mark
	// read here is still the greatest position when the new rows commit,
	// whichever instance inserts. FOR NO KEY UPDATE (not FOR UPDATE) does
	// not block the FOR KEY SHARE locks that foreign-key checks of other
	// writes to the project take.
	lockContactsSQL = `SELECT contacts_last_created_at, contacts_last_id
	FROM projects WHERE id = $1 FOR NO KEY UPDATE`
	setContactsMarkSQL = `UPDATE projects
	SET contacts_last_created_at = $2, contacts_last_id = $3 WHERE id = $1`
	insertContactSQL = `INSERT INTO contacts (project_id, id, name, created_at)
	VALUES ($1, $2, $3, $4)`
	projectExistsSQL = `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1)`

	// The two keyset queries run on the contacts_keyset index
	// (project_id, created_at, id COLLATE "C"): an index range scan that
	// starts at the cursor and stops after limit+1 rows, whatever the
	// cursor's depth. The row comparison uses the index as one bound.
	listContactsFirstSQL = `SELECT id, name, created_at FROM contacts
	WHERE project_id = $1
	ORDER BY created_at, id LIMIT $2`
	listContactsAfterSQL = `SELECT id, name, created_at FROM contacts
	WHERE project_id = $1 AND (created_at, id) > ($2, $3)
	ORDER BY created_at, id LIMIT $4`

	deleteContactSQL = `DELETE FROM contacts WHERE project_id = $1 AND id = $2`

	// analyzeContactsSQL readies the table after a bulk import (see
	// AnalyzeContacts). VACUUM runs outside any transaction block.
	analyzeContactsSQL = `VACUUM (ANALYZE) contacts`
)

// lockContacts locks the project's contact high-water mark for the rest of
// tx and returns it; pgx.ErrNoRows means that the project does not exist.
func lockContacts(ctx context.Context, tx pgx.Tx, projectID string) (mark, error) {
	var at pgtype.Timestamptz
	var id pgtype.Text
	if err := tx.QueryRow(ctx, lockContactsSQL, projectID).Scan(&at, &id); err != nil {
		return mark{}, err
	}
	return markOf(at, id), nil
}

// CreateContact creates c and returns it as stored. The stored CreatedAt is
// c.CreatedAt truncated to microseconds, raised if needed so that the new
// contact sorts after every contact the project has ever had, deleted ones
// included (so also after any cursor a client holds). Inserts into one
// project are serialized by a row lock on the project, across every
// instance. It returns an error matching store.ErrInvalid when
// store.CheckContact refuses c, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) (store.Contact, error) {
	const op = "create contact"
	var stored store.Contact
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		m, err := lockContacts(ctx, tx, c.ProjectID)
		if err != nil {
			return err
		}
		stored = c
		stored.CreatedAt = m.place(dbTime(c.CreatedAt), c.ID)
		if _, err := tx.Exec(ctx, insertContactSQL, c.ProjectID, c.ID, c.Name, stored.CreatedAt); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, setContactsMarkSQL, c.ProjectID, stored.CreatedAt, c.ID)
		return err
	})
	if err != nil {
		return store.Contact{}, err
	}
	return stored, nil
}

// CreateContacts inserts cs, contacts of one project, in one transaction
// with COPY: all of them or, on any error, none. Each contact's ProjectID
// must be projectID or empty. Each CreatedAt is placed as CreateContact
// places it, relative to the contacts the project had before the call;
// contacts in cs may share a CreatedAt and then sort by id. It returns an
// error matching store.ErrInvalid when store.CheckContact refuses a contact,
// store.ErrNotFound for an unknown project and store.ErrConflict for an id
// that exists or appears twice in cs.
func (s *Store) CreateContacts(ctx context.Context, projectID string, cs []store.Contact) error {
	const op = "create contacts"
	if len(cs) == 0 {
		var ok bool
		err := s.read(ctx, op, func(q querier) error {
			return q.QueryRow(ctx, projectExistsSQL, projectID).Scan(&ok)
		})
		if err != nil {
			return err
		}
		if !ok {
			return notFound(op)
		}
		return nil
	}
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		m, err := lockContacts(ctx, tx, projectID)
		if err != nil {
			return err
		}
		next := m
		times := make([]time.Time, len(cs))
		for i, c := range cs {
			times[i] = m.place(dbTime(c.CreatedAt), c.ID)
			if next.after(times[i], c.ID) {
				next = mark{at: times[i], id: c.ID, set: true}
			}
		}
		src := pgx.CopyFromSlice(len(cs), func(i int) ([]any, error) {
			return []any{projectID, cs[i].ID, cs[i].Name, times[i]}, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"contacts"},
			[]string{"project_id", "id", "name", "created_at"}, src); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, setContactsMarkSQL, projectID, next.at, next.id)
		return err
	})
}

// AnalyzeContacts readies the contacts table after a bulk import
// (CreateContacts called many times): VACUUM (ANALYZE) of the table sets
// the visibility and hint bits of the new rows and gathers the planner's
// statistics, the passes autovacuum would otherwise make later, while the
// table serves. A freshly imported table has neither: the first reads of
// each new row set its hint bits (dirtying its page), and autovacuum's
// passes over the new rows land among the requests. It takes about as long
// as one read of the table, and may run while the table serves.
func (s *Store) AnalyzeContacts(ctx context.Context) error {
	return s.write(ctx, "analyze contacts", func(q querier) error {
		_, err := q.Exec(ctx, analyzeContactsSQL)
		return err
	})
}

// ListContacts returns at most req.Limit contacts of the project that sort
// strictly after req.After, in ascending (CreatedAt, ID) order with ids
// compared byte by byte, and whether more follow. It is one keyset query on
// the contacts_keyset index reading req.Limit+1 rows, never OFFSET, so a
// page costs the same at any depth. An unknown project lists as empty. A
// req.Limit below 1 returns an error matching store.ErrInvalid.
func (s *Store) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	const op = "list contacts"
	limit, fetch := pageSize(req)
	sql, args := listContactsFirstSQL, []any{projectID, fetch}
	if !req.After.IsZero() {
		sql, args = listContactsAfterSQL, []any{projectID, dbTime(req.After.CreatedAt), req.After.ID, fetch}
	}
	return listPage(ctx, s, op, limit, sql, args, func(rows pgx.Rows) (store.Contact, error) {
		c := store.Contact{ProjectID: projectID}
		err := rows.Scan(&c.ID, &c.Name, &c.CreatedAt)
		c.CreatedAt = c.CreatedAt.UTC()
		return c, err
	})
}

// DeleteContact deletes the contact, or returns an error matching
// store.ErrNotFound. Cursors naming it stay valid, and contacts created later
// still sort after it.
func (s *Store) DeleteContact(ctx context.Context, projectID, id string) error {
	const op = "delete contact"
	return s.execOne(ctx, op, deleteContactSQL, projectID, id)
}
