package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// lockContactsSQL serializes contact inserts per project: the row lock
	// is held until the inserting transaction ends, so the high-water mark
	// read here is still the greatest position when the new rows commit,
	// whichever instance inserts.
	lockContactsSQL = `SELECT contacts_last_created_at, contacts_last_id
	FROM projects WHERE id = ? FOR UPDATE`
	setContactsMarkSQL = `UPDATE projects
	SET contacts_last_created_at = ?, contacts_last_id = ? WHERE id = ?`
	insertContactSQL = `INSERT INTO contacts (project_id, pos, id, name, created_at) VALUES `

	// The keyset queries run on the primary key (project_id, pos), pos
	// being the (created_at, id) position as bytes (see position): a
	// range scan that starts at the cursor and stops after limit+1 rows,
	// whatever the cursor's depth. One range on one column plans and
	// runs as cheaply as the first page; a row comparison
	// (created_at, id) > (?, ?) is no index range for MariaDB, and its
	// spelling as two ranges costs a deep page a third more.
	listContactsSQL      = `SELECT id, name, created_at FROM contacts WHERE project_id = ?`
	listContactsAfterSQL = ` AND pos > ?`
	listContactsOrderSQL = ` ORDER BY pos LIMIT %d`

	deleteContactSQL = `DELETE FROM contacts WHERE project_id = ? AND id = ?`
)

// contactBatch is how many contacts one INSERT of CreateContacts carries.
const contactBatch = 1000

// lockContacts locks the project's contact high-water mark for the rest of
// tx and returns it; sql.ErrNoRows means that the project does not exist.
func lockContacts(ctx context.Context, tx *sql.Tx, projectID string) (mark, error) {
	var at sql.NullTime
	var id sql.NullString
	if err := tx.QueryRowContext(ctx, lockContactsSQL, projectID).Scan(&at, &id); err != nil {
		return mark{}, err
	}
	return markOf(at, id), nil
}

// CreateContact creates c and returns it as stored. The stored CreatedAt is
// c.CreatedAt truncated to microseconds, raised if needed so that the new
// contact sorts after every contact the project has ever had, deleted ones
// included. Inserts into one project are serialized by a row lock on the
// project, across every instance. It returns an error matching
// store.ErrInvalid when store.CheckContact refuses c, store.ErrNotFound for
// an unknown project and store.ErrConflict for an existing id.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) (store.Contact, error) {
	const op = "create contact"
	var stored store.Contact
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := lockContacts(ctx, tx, c.ProjectID)
		if err != nil {
			return err
		}
		stored = c
		stored.CreatedAt = m.place(dbTime(c.CreatedAt), c.ID)
		if _, err := tx.ExecContext(ctx, insertContactSQL+`(?, ?, ?, ?, ?)`, c.ProjectID, position(stored.CreatedAt, c.ID), c.ID, c.Name, stored.CreatedAt); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, setContactsMarkSQL, stored.CreatedAt, c.ID, c.ProjectID)
		return err
	})
	if err != nil {
		return store.Contact{}, err
	}
	return stored, nil
}

// CreateContacts inserts cs, contacts of one project, in one transaction
// of multi-row INSERTs (contactBatch rows each): all of them or, on any
// error, none. Each contact's ProjectID must be projectID or empty. Each
// CreatedAt is placed as CreateContact places it, relative to the contacts
// the project had before the call. It returns an error matching
// store.ErrInvalid when store.CheckContact refuses a contact,
// store.ErrNotFound for an unknown project and store.ErrConflict for an id
// that exists or appears twice in cs.
func (s *Store) CreateContacts(ctx context.Context, projectID string, cs []store.Contact) error {
	const op = "create contacts"
	if len(cs) == 0 {
		return s.read(ctx, op, func(q querier) error {
			return existsOrNotFound(ctx, q, op, projectExistsSQL, projectID)
		})
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
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
		for start := 0; start < len(cs); start += contactBatch {
			end := min(start+contactBatch, len(cs))
			var b strings.Builder
			b.WriteString(insertContactSQL)
			args := make([]any, 0, 4*(end-start))
			for i := start; i < end; i++ {
				if i > start {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?, ?)")
				args = append(args, projectID, position(times[i], cs[i].ID), cs[i].ID, cs[i].Name, times[i])
			}
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, setContactsMarkSQL, next.at, next.id, projectID)
		return err
	})
}

// ListContacts returns at most req.Limit contacts of the project that sort
// strictly after req.After, in ascending (CreatedAt, ID) order with ids
// compared byte by byte, and whether more follow. It is one keyset query on
// the primary key (project_id, pos) reading req.Limit+1 adjacent
// rows, never OFFSET, so a page costs the same at any depth. An unknown
// project lists as empty.
func (s *Store) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	const op = "list contacts"
	limit, fetch := pageSize(req)
	query, args := listContactsSQLFor(projectID, req.After, fetch)
	return listPage(ctx, s, op, limit, query, args, func(row rowScanner) (store.Contact, error) {
		return scanContact(row, projectID)
	})
}

// listContactsSQLFor returns the keyset query of a page of fetch rows after
// the cursor, and its arguments.
func listContactsSQLFor(projectID string, after paginate.Cursor, fetch int) (string, []any) {
	query, args := listContactsSQL, []any{projectID}
	if !after.IsZero() {
		query += listContactsAfterSQL
		args = append(args, position(after.CreatedAt, after.ID))
	}
	return query + fmt.Sprintf(listContactsOrderSQL, fetch), args
}

func scanContact(row rowScanner, projectID string) (store.Contact, error) {
	c := store.Contact{ProjectID: projectID}
	err := row.Scan(&c.ID, &c.Name, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// DeleteContact deletes the contact, or returns an error matching
// store.ErrNotFound. Cursors naming it stay valid, and contacts created later
// still sort after it.
func (s *Store) DeleteContact(ctx context.Context, projectID, id string) error {
	const op = "delete contact"
	return s.execOne(ctx, op, deleteContactSQL, projectID, id)
}
