package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

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

// contactBatch is how many rows one multi-row INSERT of CreateContacts
// carries. Larger batches cost more: the driver matches each of a
// statement's parameters against the argument list, so binding grows with
// the square of the batch; 32 rows (128 parameters) measured fastest.
const contactBatch = 32

// contactFloor is the newest position a project's contacts have ever had.
// New contacts must sort after it.
type contactFloor struct {
	has bool
	at  int64
	id  string
}

// place returns the stored time of a new contact given at t with id: t,
// raised to the floor's time, and one microsecond past it when the contact
// would otherwise not sort after the floor (same time, id not greater).
func (f contactFloor) place(t int64, id string) int64 {
	if !f.has {
		return t
	}
	t = max(t, f.at)
	if t == f.at && id <= f.id {
		t = f.at + 1
	}
	return t
}

// raise moves the floor to (at, id) if that sorts after it.
func (f *contactFloor) raise(at int64, id string) {
	if !f.has || at > f.at || (at == f.at && id > f.id) {
		f.has, f.at, f.id = true, at, id
	}
}

// contactFloor reads the project's floor inside the write transaction, or
// returns an error matching store.ErrNotFound for an unknown project.
func (t *wtx) contactFloor(op, projectID string) (contactFloor, error) {
	row, err := t.queryRow(contactTopSQL, projectID)
	if err != nil {
		return contactFloor{}, err
	}
	var at sql.NullInt64
	var id sql.NullString
	switch err := row.Scan(&at, &id); {
	case isNoRows(err):
		return contactFloor{}, notFound(op + ": project")
	case err != nil:
		return contactFloor{}, err
	}
	return contactFloor{has: at.Valid && id.Valid, at: at.Int64, id: id.String}, nil
}

// setContactFloor records f as the project's floor.
func (t *wtx) setContactFloor(projectID string, f contactFloor) error {
	_, err := t.exec(setContactTopSQL, f.at, f.id, projectID)
	return err
}

// CreateContact creates c and returns it as stored. The stored CreatedAt is
// c.CreatedAt truncated to microseconds, raised if needed so that c sorts
// after every contact the project has or has had (a client's cursor may name
// a deleted one): to the time of the newest, and one microsecond past it if
// c's id is not greater than that contact's. The project row keeps that
// newest position; reading it, inserting and moving it happen in one write
// transaction. It
// returns an error matching store.ErrInvalid for an empty id or an invalid
// project id, store.ErrNotFound for an unknown project and store.ErrConflict
// for an existing id.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) (store.Contact, error) {
	const op = "create contact"
	if err := checkKey(op, c.ProjectID, c.ID); err != nil {
		return store.Contact{}, err
	}
	var at int64
	err := s.writeTx(ctx, func(t *wtx) error {
		f, err := t.contactFloor(op, c.ProjectID)
		if err != nil {
			return err
		}
		at = f.place(micros(c.CreatedAt), c.ID)
		if _, err := t.exec(insertContactSQL, c.ProjectID, contactPos(at, c.ID), c.ID, c.Name); err != nil {
			return err
		}
		f.raise(at, c.ID)
		return t.setContactFloor(c.ProjectID, f)
	})
	if err != nil {
		return store.Contact{}, wrap(op, err)
	}
	c.CreatedAt = fromMicros(at)
	return c, nil
}

// CreateContacts inserts cs into the project in one transaction: all or
// nothing. Each contact's ProjectID must be empty or projectID. Each stored
// CreatedAt follows CreateContact's rule against the contacts the project
// has had before the call, so contacts of cs may share a time with each
// other, and all of them sort after every earlier contact. It returns an error
// matching store.ErrInvalid for an empty id, store.ErrNotFound for an
// unknown project and store.ErrConflict when an id exists or repeats in cs.
// It is the bulk path: rows go in with multi-row INSERTs of prepared
// statements.
func (s *Store) CreateContacts(ctx context.Context, projectID string, cs []store.Contact) error {
	const op = "create contacts"
	if !store.ValidProjectID(projectID) {
		return invalid(op, "project id is not a slug")
	}
	for i, c := range cs {
		if c.ID == "" {
			return invalid(op, fmt.Sprintf("contact %d: empty id", i))
		}
		if c.ProjectID != "" && c.ProjectID != projectID {
			return invalid(op, fmt.Sprintf("contact %d: of another project", i))
		}
	}
	err := s.inTx(ctx, func(t *wtx) error {
		f, err := t.contactFloor(op, projectID)
		if err != nil {
			return err
		}
		top := f
		args := make([]any, 0, 4*contactBatch)
		for start := 0; start < len(cs); start += contactBatch {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := cs[start:min(start+contactBatch, len(cs))]
			args = args[:0]
			for _, c := range chunk {
				at := f.place(micros(c.CreatedAt), c.ID)
				top.raise(at, c.ID)
				args = append(args, projectID, contactPos(at, c.ID), c.ID, c.Name)
			}
			if _, err := t.exec(multiInsertContactsSQL(len(chunk)), args...); err != nil {
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

// multiInsertContactsSQL returns an INSERT of n contacts. The full batch's
// statement is prepared at Open and reused; the last, shorter one of a call
// is prepared in its transaction.
func multiInsertContactsSQL(n int) string {
	if n == contactBatch {
		return fullContactBatchSQL
	}
	return buildMultiInsert(n)
}

var fullContactBatchSQL = buildMultiInsert(contactBatch)

func buildMultiInsert(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO contacts (project_id, pos, id, name) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?)")
	}
	return b.String()
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
// the same at any depth. An unknown project lists as empty. It returns an
// error matching store.ErrInvalid for an invalid project id or a limit below
// 1.
//
// On a file database the rows are read on the raw read path (rawread.go).
func (s *Store) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	const op = "list contacts"
	if !store.ValidProjectID(projectID) {
		return paginate.Page[store.Contact]{}, invalid(op, "project id is not a slug")
	}
	if req.Limit < 1 {
		return paginate.Page[store.Contact]{}, invalid(op, "limit below 1")
	}
	var page paginate.Page[store.Contact]
	var err error
	if s.raw != nil {
		page, err = s.listContactsRaw(ctx, projectID, req)
	} else {
		page, err = s.listContactsSQL(ctx, projectID, req)
	}
	return page, wrap(op, err)
}

// listQuery returns the keyset query of req and, for a page after a cursor,
// the cursor's position (nil for the first page). The query's parameters
// are the project id, the position if any, and the limit plus one.
func listQuery(req paginate.Request) (string, []byte) {
	if req.After.IsZero() {
		return listContactsFirstSQL, nil
	}
	return listContactsAfterSQL, contactPos(micros(req.After.CreatedAt), req.After.ID)
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

// newPageText returns an empty pageText sized for limit+1 rows.
func newPageText(limit int) *pageText {
	n := min(limit+1, paginate.MaxLimit+1)
	return &pageText{text: make([]byte, 0, 72*n), rows: make([]pageRow, 0, n)}
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
			CreatedAt: fromMicros(at),
		}
		start = r.nameEnd
	}
	page := paginate.Page[store.Contact]{Items: items}
	if len(items) > limit {
		page.Items, page.HasMore = items[:limit], true
	}
	return page, nil
}

// listContactsRaw runs the keyset query on a raw connection.
func (s *Store) listContactsRaw(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	// The query takes microseconds and is not interrupted; a request
	// already cancelled is not run, as on database/sql.
	if err := ctx.Err(); err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	c, err := s.raw.get(ctx)
	if err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	defer s.raw.put(c)
	query, after := listQuery(req)
	var argv [3]rawArg
	args := append(argv[:0], textArg(projectID))
	if after != nil {
		args = append(args, blobArg(after))
	}
	args = append(args, intArg(int64(req.Limit)+1))
	st, err := c.stmt(query)
	if err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	defer c.reset(st)
	if err := c.bind(st, args); err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	pt := newPageText(req.Limit)
	for len(pt.rows) < cap(pt.rows) {
		ok, err := c.next(st)
		if err != nil {
			return paginate.Page[store.Contact]{}, err
		}
		if !ok {
			break
		}
		var r pageRow
		if pt.text, err = c.appendBlob(pt.text, st, 0); err != nil {
			return paginate.Page[store.Contact]{}, err
		}
		r.posEnd = len(pt.text)
		if pt.text, err = c.appendText(pt.text, st, 1); err != nil {
			return paginate.Page[store.Contact]{}, err
		}
		r.nameEnd = len(pt.text)
		pt.rows = append(pt.rows, r)
	}
	return pt.page(projectID, req.Limit)
}

// listContactsSQL runs the keyset query through database/sql (":memory:").
func (s *Store) listContactsSQL(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	query, after := listQuery(req)
	args := []any{projectID}
	if after != nil {
		args = append(args, after)
	}
	args = append(args, req.Limit+1)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	defer rows.Close()
	pt := newPageText(req.Limit)
	var pos sql.RawBytes
	var name sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&pos, &name); err != nil {
			return paginate.Page[store.Contact]{}, err
		}
		pt.text = append(pt.text, pos...)
		r := pageRow{posEnd: len(pt.text)}
		pt.text = append(pt.text, name...)
		r.nameEnd = len(pt.text)
		pt.rows = append(pt.rows, r)
	}
	if err := rows.Err(); err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	return pt.page(projectID, req.Limit)
}

// DeleteContact deletes the contact, or returns an error matching
// store.ErrNotFound. Cursors naming it stay valid: a page starts after the
// cursor's position, whether or not a contact is still there.
func (s *Store) DeleteContact(ctx context.Context, projectID, id string) error {
	const op = "delete contact"
	if err := checkKey(op, projectID, id); err != nil {
		return err
	}
	res, err := s.exec(ctx, deleteContactSQL, id, projectID)
	return wrap(op, mustAffect(res, err))
}
