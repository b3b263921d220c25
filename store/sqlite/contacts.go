package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// contactTopSQL reads the newest position the project's contacts have
	// ever had (deleted ones included), the floor for new contacts; no row
	// means no project.
	contactTopSQL    = `SELECT contact_top_at, contact_top_id FROM projects WHERE id = ?`
	setContactTopSQL = `UPDATE projects SET contact_top_at = ?, contact_top_id = ? WHERE id = ?`
	insertContactSQL = `INSERT INTO contacts (project_id, pos, id, name) VALUES (?, ?, ?, ?)`
	// The keyset queries read the primary key (project_id, pos) from a seek
	// to the cursor's position: no OFFSET, no sort, and no test per row
	// (see migrations/0003_contact_pos.sql).
	//
	// The limit is written (? + 0), not ?: SQLite's planner reads a bare
	// bound LIMIT parameter to tune the plan, and to keep that plan right it
	// marks the statement to be re-prepared whenever the parameter is bound
	// again (sqlite3ExprIsInteger sets the statement's expmask), that is on
	// every run. An expression is not read, so the prepared statement is
	// reused; the plan is the same (the keyset seek needs no row estimate).
	listContactsFirstSQL = `SELECT pos, name FROM contacts WHERE project_id = ?
ORDER BY pos LIMIT (? + 0)`
	listContactsAfterSQL = `SELECT pos, name FROM contacts WHERE project_id = ? AND pos > ?
ORDER BY pos LIMIT (? + 0)`
	deleteContactSQL = `DELETE FROM contacts WHERE id = ? AND project_id = ?`
)

// contactFloor reads the project's floor inside the write transaction, or
// returns an error matching store.ErrNotFound for an unknown project.
func (t *wtx) contactFloor(op, projectID string) (floor, error) {
	f, err := t.readFloor(contactTopSQL, projectID)
	if errors.Is(err, errNoRows) {
		return floor{}, notFound(op + ": project")
	}
	return f, err
}

// setContactFloor records f as the project's floor.
func (t *wtx) setContactFloor(projectID string, f floor) error {
	_, err := t.exec(setContactTopSQL, f.at, f.id, projectID)
	return err
}

// CreateContact creates c and returns it as stored. The stored CreatedAt is
// c.CreatedAt truncated to microseconds, raised if needed so that c sorts
// after every contact the project has or has had (a client's cursor may name
// a deleted one): to the time of the newest, and one microsecond past it if
// c's id is not greater than that contact's. The project row keeps that
// newest position; reading it, inserting and moving it happen in one write
// transaction. It returns an error matching store.ErrInvalid when
// store.CheckContact refuses c, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) (store.Contact, error) {
	const op = "create contact"
	var at int64
	err := s.writeTx(ctx, func(t *wtx) error {
		f, err := t.contactFloor(op, c.ProjectID)
		if err != nil {
			return err
		}
		at = f.place(dbTime(c.CreatedAt), c.ID)
		if _, err := t.exec(insertContactSQL, c.ProjectID, contactPos(at, c.ID), c.ID, c.Name); err != nil {
			return err
		}
		f.raise(at, c.ID)
		return t.setContactFloor(c.ProjectID, f)
	})
	if err != nil {
		return store.Contact{}, wrap(op, err)
	}
	c.CreatedAt = fromDBTime(at)
	return c, nil
}

// CreateContacts inserts cs into the project in one transaction: all or
// nothing. Each contact's ProjectID must be empty or projectID. Each stored
// CreatedAt follows CreateContact's rule against the contacts the project
// has had before the call, so contacts of cs may share a time with each
// other, and all of them sort after every earlier contact. It returns an error
// matching store.ErrInvalid when store.CheckContact refuses a contact (given
// projectID), store.ErrNotFound for an unknown project and
// store.ErrConflict when an id exists or repeats in cs.
// It is the bulk path: one transaction, one prepared single-row INSERT run
// for each contact. (A multi-row INSERT makes SQLite keep a statement
// journal, a copy of every page the statement changes that the
// transaction had changed before, so that the statement can be undone
// alone; a single-row INSERT needs none, and is the faster way here.)
func (s *Store) CreateContacts(ctx context.Context, projectID string, cs []store.Contact) error {
	const op = "create contacts"
	err := s.inTx(ctx, func(t *wtx) error {
		f, err := t.contactFloor(op, projectID)
		if err != nil {
			return err
		}
		top := f
		for i, c := range cs {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			at := f.place(dbTime(c.CreatedAt), c.ID)
			top.raise(at, c.ID)
			if _, err := t.exec(insertContactSQL, projectID, contactPos(at, c.ID), c.ID, c.Name); err != nil {
				return err
			}
		}
		if len(cs) == 0 {
			return nil
		}
		return t.setContactFloor(projectID, top)
	})
	return wrap(op, err)
}

// contactPos returns the stored position of a contact created at the
// microsecond at with id: at as 8 bytes big-endian with the sign bit flipped,
// then id. Positions compare byte by byte as (at, id) compare.
func contactPos(at int64, id string) []byte {
	b := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(b, uint64(at)^(1<<63))
	return append(b, id...)
}

// splitPos returns the created_at microsecond of the position pos, whose id
// is the rest after the first 8 bytes. A position without an id is an
// error (a corrupt row).
func splitPos(pos []byte) (int64, error) {
	if len(pos) <= 8 {
		return 0, fmt.Errorf("contact position of %d bytes", len(pos))
	}
	return int64(binary.BigEndian.Uint64(pos) ^ (1 << 63)), nil
}

// ListContacts returns at most req.Limit contacts of the project that sort
// strictly after req.After, in ascending (CreatedAt, ID) order with ids
// compared byte by byte, and whether more follow. It seeks the primary key
// (project_id, pos) to the cursor and reads req.Limit+1 rows, so a page costs
// the same at any depth. An unknown project lists as empty. Its arguments
// are checked by store.Checked.
//
// It is the hottest read: it binds and reads the statement's columns
// itself, each row's position and name appended to one buffer of which the
// contacts' strings are slices.
func (s *Store) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	_, page, err := s.listContacts(ctx, "list contacts", projectID, req, false)
	return page, err
}

// ListContactsVersioned implements [store.VersionedContactLister]: the page
// ListContacts returns, and the change version (see ChangeVersion) read on
// the same reader in the same read transaction, so that a caller whose
// records are current at that version pays one read for both.
// It is a capability, not behind store.Checked: it checks its own
// arguments (store.CheckListContacts).
func (s *Store) ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
	const op = "list contacts versioned"
	if err := store.CheckListContacts(projectID, req); err != nil {
		return 0, paginate.Page[store.Contact]{}, check(op, err)
	}
	return s.listContacts(ctx, op, projectID, req, true)
}

// listContacts reads a page of contacts and, when versioned, the change
// version with it.
func (s *Store) listContacts(ctx context.Context, op, projectID string, req paginate.Request, versioned bool) (uint64, paginate.Page[store.Contact], error) {
	pt := newPageText(req.Limit)
	var ver uint64
	err := s.read(ctx, func(conn *sqlite.Conn) (err error) {
		var dv *sqlite.Stmt
		if versioned {
			// Read first: its open statement holds the read
			// transaction that the page is read in.
			if dv, err = s.version.begin(conn); err != nil {
				return err
			}
			defer func() {
				if err != nil && dv != nil {
					_ = dv.Reset() // end resets it on success
				}
			}()
		}
		query, after := listQuery(req)
		stmt, err := conn.Prepare(query)
		if err != nil {
			return err
		}
		stmt.BindText(1, projectID)
		limit := 2
		if after != nil {
			stmt.BindBytes(2, after)
			limit = 3
		}
		stmt.BindInt64(limit, int64(req.Limit)+1)
		for len(pt.rows) <= req.Limit {
			ok, err := stmt.Step()
			if err != nil {
				return err // Step has reset the statement
			}
			if !ok {
				break
			}
			pt.appendColumn(stmt, 0)
			r := pageRow{posEnd: len(pt.text)}
			pt.appendColumn(stmt, 1)
			r.nameEnd = len(pt.text)
			pt.rows = append(pt.rows, r)
		}
		if err := stmt.Reset(); err != nil || !versioned {
			return err
		}
		ver, err = s.version.end(ctx, conn, dv)
		return err
	})
	if err != nil {
		return 0, paginate.Page[store.Contact]{}, wrap(op, err)
	}
	page, err := pt.page(projectID, req.Limit)
	return ver, page, wrap(op, err)
}

// listQuery returns the keyset query of req and, for a page after a cursor,
// the cursor's position (nil for the first page). The query's parameters
// are the project id, the position if any, and the limit plus one.
func listQuery(req paginate.Request) (string, []byte) {
	if req.After.IsZero() {
		return listContactsFirstSQL, nil
	}
	return listContactsAfterSQL, contactPos(dbTime(req.After.CreatedAt), req.After.ID)
}

// pageText collects the rows of a page: their positions and names are
// appended to one buffer, and the contacts' strings are slices of it.
type pageText struct {
	text []byte
	rows []pageRow
}

// pageRow is where a row's position and name end in pageText.text.
type pageRow struct {
	posEnd, nameEnd int
}

// newPageText returns an empty pageText sized for limit+1 rows (for at most
// paginate.MaxLimit+1: a larger limit grows it as rows come).
func newPageText(limit int) *pageText {
	n := min(limit+1, paginate.MaxLimit+1)
	return &pageText{text: make([]byte, 0, 72*n), rows: make([]pageRow, 0, n)}
}

// columnRoom is the free space appendColumn keeps at the end of the page
// buffer, enough for any position (8 bytes and an id of at most
// store.MaxIDLen bytes) or name (at most store.MaxNameLen characters) that
// the store writes.
const columnRoom = 512

// appendColumn appends column col of stmt's row, a text or a blob, to
// p.text. The value is copied into the buffer's free space, and its length
// asked for only when it may not have fitted.
func (p *pageText) appendColumn(stmt *sqlite.Stmt, col int) {
	p.text = slices.Grow(p.text, columnRoom)
	free := p.text[len(p.text):cap(p.text)]
	n := stmt.ColumnBytes(col, free)
	if n == len(free) {
		if n = stmt.ColumnLen(col); n > len(free) {
			p.text = slices.Grow(p.text, n)
			free = p.text[len(p.text):cap(p.text)]
			stmt.ColumnBytes(col, free)
		}
	}
	p.text = p.text[:len(p.text)+n]
}

// page returns the collected rows as a page of contacts of projectID: the
// first limit of them, with HasMore if there were more. It must be called
// once, after the last row: the contacts' strings share p.text.
func (p *pageText) page(projectID string, limit int) (paginate.Page[store.Contact], error) {
	all := unsafe.String(unsafe.SliceData(p.text), len(p.text)) // p.text is not written again
	items := make([]store.Contact, len(p.rows))
	start := 0
	for i, r := range p.rows {
		at, err := splitPos(p.text[start:r.posEnd])
		if err != nil {
			return paginate.Page[store.Contact]{}, err
		}
		items[i] = store.Contact{
			ID:        all[start+8 : r.posEnd],
			ProjectID: projectID,
			Name:      all[r.posEnd:r.nameEnd],
			CreatedAt: fromDBTime(at),
		}
		start = r.nameEnd
	}
	return paginate.PageOf(items, limit), nil
}

// DeleteContact deletes the contact, or returns an error matching
// store.ErrNotFound. Cursors naming it stay valid: a page starts after the
// cursor's position, whether or not a contact is still there.
func (s *Store) DeleteContact(ctx context.Context, projectID, id string) error {
	const op = "delete contact"
	return wrap(op, mustAffect(s.exec(ctx, deleteContactSQL, id, projectID)))
}
