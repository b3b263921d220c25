package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Databases hands out fresh databases to the tests of a long suite (such as
// the conformance suite, a database for each of its cases) without making
// them wait for PostgreSQL. Given a prepare function, each database starts
// as a copy of one it prepared once (CREATE DATABASE ... TEMPLATE, so a
// store's migrations run once, not for every test), and a used one is
// reset to that copy's state for a later test rather than dropped: its
// sessions ended, its database settings back to those of the isolation
// asked for, every table that holds rows emptied (DELETE, tables that
// reference others first) and the prepared rows put back. Copying a
// database and dropping it costs PostgreSQL a checkpoint and megabytes of
// files written and synced; a reset, a few rows deleted. (TRUNCATE would
// give each table and index a new file, several times the cost of
// deleting a test's few rows.)
// A used database whose relations, functions, types or schemas differ from
// the prepared one's is dropped instead, and so is one whose reset fails,
// so every test starts on a database as the prepared one was. Without a
// prepare function every database handed out is new, as [NewDatabase]'s
// are, and each used one is dropped.
//
// The next database is made (or reset) while a test runs. The owner's
// cleanup (the test given to [NewDatabases]) drops every database of the
// source, the prepared one included, and waits until every drop is done,
// reporting a failed one as the owner's error.
//
// Its tests may run in parallel. New must not be called once the owner's
// cleanup has begun.
type Databases struct {
	admin    string
	alter    []string
	template string // the prepared database copied, or ""
	copyWith string // the options of CREATE DATABASE that make each (see copyStrategy)
	// The prepared database's state, as a reset restores it: its objects
	// (see objectsSQL) and the rows of each table that has any, in
	// tableListSQL's order (reset puts them back in the reverse).
	objects string
	rows    []tableRows
	usedSQL string      // selects the names of the tables that hold rows, as text[]
	ahead   chan made   // the next database New hands out
	ended   chan string // databases whose test ended, closed by the owner's cleanup
	done    chan error  // the keeper's joined errors, once ended is closed

	// resetConns holds the connection each reset database was reset on,
	// for its next reset: a connection costs PostgreSQL a process, and a
	// long suite resets a database for each of its cases. A database is
	// reset by one goroutine at a time, which takes its connection out.
	mu         sync.Mutex
	resetConns map[string]*pgx.Conn
}

// made is a database made ahead, or why it could not be.
type made struct {
	name, url string
	err       error
}

// tableRows is one table's rows in COPY's text format.
type tableRows struct {
	table string // quoted
	data  []byte
}

// NewDatabases returns a source of fresh databases on the server of
// [AdminURL] for the tests under t. prepare, if not nil, runs once, on the
// database every one handed out starts as a copy of (it must close its
// connections when it returns); an error from it fails t. It skips or
// fails t as AdminURL does.
func NewDatabases(t testing.TB, prepare func(ctx context.Context, url string) error) *Databases {
	t.Helper()
	return newDatabases(t, nil, prepare)
}

func newDatabases(t testing.TB, alter []string, prepare func(ctx context.Context, url string) error) *Databases {
	t.Helper()
	d := &Databases{
		admin: AdminURL(t),
		alter: alter,
		ahead: make(chan made),
		ended: make(chan string, 64),
		done:  make(chan error, 1),

		resetConns: map[string]*pgx.Conn{},
	}
	strategy, err := copyStrategy(d.admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	d.copyWith = strategy
	if prepare != nil {
		name, url, err := create(d.admin, strategy, nil)
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		err = prepare(ctx, url)
		if err == nil {
			d.objects, d.rows, d.usedSQL, err = snapshot(ctx, url)
		}
		cancel()
		if err != nil {
			t.Fatalf("pgtest: preparing database %s: %v", name, errors.Join(err, drop(d.admin, name)))
		}
		d.template, d.copyWith = name, strings.TrimSpace("TEMPLATE "+name+" "+strategy)
	}
	go d.keep()
	t.Cleanup(func() {
		close(d.ended)
		if err := <-d.done; err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return d
}

// keep runs until ended is closed: it holds the database New hands out
// next, and has each database whose test ended reset (or dropped) by a
// goroutine of its own, so that a reset never holds up the next test. The
// database it holds next is a reset one, if need be after waiting for a
// reset under way (quicker than a copy), or else a new one. Once ended is
// closed it waits for the resets under way, drops every database of the
// source and sends their joined errors on done.
func (d *Databases) keep() {
	var (
		free    []string // reset, ready to hand out again
		errs    []error
		next    *made
		back    = make(chan recycled)
		pending int       // recyclings under way
		ended   = d.ended // nil once closed
	)
	take := func(r recycled) {
		pending--
		if r.dropped {
			errs = append(errs, r.err)
		} else {
			free = append(free, r.name)
		}
	}
	// receive takes what <-ended gave: a database to recycle, or the close.
	receive := func(name string, ok bool) {
		if !ok {
			ended = nil
			return
		}
		pending++
		go func() { back <- d.recycle(name) }()
	}
	for ended != nil || pending > 0 {
		if next == nil && ended != nil {
			// Every database whose test has ended is recycled, and one is
			// waited for rather than a new one made.
		drain:
			for {
				select {
				case name, ok := <-ended:
					receive(name, ok)
					if ended == nil {
						break drain
					}
				default:
					break drain
				}
			}
			if ended == nil {
				continue
			}
			if len(free) == 0 && pending > 0 {
				take(<-back)
			}
			var m made
			if n := len(free); n > 0 {
				m.name, free = free[n-1], free[:n-1]
				m.url, m.err = withDatabase(d.admin, m.name)
			} else {
				m.name, m.url, m.err = create(d.admin, d.copyWith, d.alter)
			}
			next = &m
		}
		var ahead chan made // nil, so never ready, once ended is closed
		var out made
		if ended != nil {
			ahead, out = d.ahead, *next
		}
		select {
		case ahead <- out:
			next = nil
		case name, ok := <-ended:
			receive(name, ok)
		case r := <-back:
			take(r)
		}
	}
	if next != nil && next.err == nil {
		free = append(free, next.name)
	}
	if d.template != "" {
		free = append(free, d.template)
	}
	for _, name := range free {
		d.closeResetConn(name)
		errs = append(errs, drop(d.admin, name))
	}
	d.done <- errors.Join(errs...)
}

// recycled is the outcome of recycling a database: reset (err nil), or
// dropped (with the drop's error).
type recycled struct {
	name    string
	dropped bool
	err     error
}

// recycle resets the database name for another test or, when it cannot
// (or there is no prepared state to reset it to), drops it.
func (d *Databases) recycle(name string) recycled {
	if d.template != "" {
		if err := d.reset(name); err == nil {
			return recycled{name: name}
		}
	}
	d.closeResetConn(name)
	return recycled{name: name, dropped: true, err: drop(d.admin, name)}
}

// resetConn returns a connection to the database name for its reset: the
// one kept from its last reset if it still answers, else a new one. It
// takes it out of resetConns; putResetConn gives it back.
func (d *Databases) resetConn(ctx context.Context, name string) (*pgx.Conn, error) {
	if conn := d.takeResetConn(name); conn != nil {
		if conn.Ping(ctx) == nil {
			return conn, nil
		}
		// Ended by its test, say: the reset ends every other session.
		_ = conn.Close(context.Background())
	}
	url, err := withDatabase(d.admin, name)
	if err != nil {
		return nil, err
	}
	return pgx.Connect(ctx, url)
}

// putResetConn keeps conn, a connection to the database name, for its next
// reset.
func (d *Databases) putResetConn(name string, conn *pgx.Conn) {
	d.mu.Lock()
	d.resetConns[name] = conn
	d.mu.Unlock()
}

// takeResetConn takes the connection kept for the database name out of
// resetConns, and returns it (nil if there is none).
func (d *Databases) takeResetConn(name string) *pgx.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	conn := d.resetConns[name]
	delete(d.resetConns, name)
	return conn
}

// closeResetConn closes the connection kept for the database name, if any.
func (d *Databases) closeResetConn(name string) {
	if conn := d.takeResetConn(name); conn != nil {
		_ = conn.Close(context.Background())
	}
}

// New returns the URL of a fresh database of t's own. A cleanup of t hands
// it back for a reset (or its drop), so that comes after the cleanups
// registered later (closing a store opened on it, say). It fails t when
// the database could not be made.
func (d *Databases) New(t testing.TB) string {
	t.Helper()
	m := <-d.ahead
	if m.err != nil {
		t.Fatalf("pgtest: %v", m.err)
	}
	t.Cleanup(func() { d.ended <- m.name })
	return m.url
}

// reset brings the database name back to the prepared database's state,
// on one connection to it (resetConn's, kept for the next reset when this
// one succeeds): it ends the database's other sessions, resets its
// settings to those of the source's isolation, checks that its objects are
// the prepared ones, and in one transaction empties every table that holds
// rows and copies the prepared rows back in.
func (d *Databases) reset(name string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := d.resetConn(ctx, name)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = conn.Close(context.Background())
			return
		}
		d.putResetConn(name, conn)
	}()
	// This session began with the settings of the database when it
	// connected (read-only, say, if a test had made it so).
	if _, err := conn.Exec(ctx, "SET default_transaction_read_only = off"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"); err != nil {
		return err
	}
	for _, sql := range append([]string{"RESET ALL"}, d.alter...) {
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" "+sql); err != nil {
			return err
		}
	}
	var objects string
	if err := conn.QueryRow(ctx, objectsSQL).Scan(&objects); err != nil {
		return err
	}
	if objects != d.objects {
		return errors.New("its objects are not the prepared database's")
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var used []string
	if err := tx.QueryRow(ctx, d.usedSQL).Scan(&used); err != nil {
		return err
	}
	if len(used) > 0 {
		// used lists the tables in tableListSQL's order, so a table is
		// emptied before those it references.
		if _, err := tx.Exec(ctx, "DELETE FROM "+strings.Join(used, "; DELETE FROM ")); err != nil {
			return err
		}
	}
	// The rows go back in the other order: a table's after those of the
	// tables it references.
	for _, r := range slices.Backward(d.rows) {
		if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(r.data), "COPY "+r.table+" FROM STDIN"); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// snapshot returns what a reset restores of the database at url: its
// objects (objectsSQL) and the rows of each of its tables that has any;
// and a query that selects, as text[], the names of its tables that hold
// rows.
func snapshot(ctx context.Context, url string) (objects string, kept []tableRows, usedSQL string, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", nil, "", err
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, objectsSQL).Scan(&objects); err != nil {
		return "", nil, "", err
	}
	rows, err := conn.Query(ctx, tableListSQL)
	if err != nil {
		return "", nil, "", err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", nil, "", err
	}
	used := make([]string, len(tables))
	for i, table := range tables {
		var b bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &b, "COPY "+table+" TO STDOUT"); err != nil {
			return "", nil, "", fmt.Errorf("copying %s: %w", table, err)
		}
		if b.Len() > 0 {
			kept = append(kept, tableRows{table: table, data: b.Bytes()})
		}
		used[i] = "CASE WHEN EXISTS (SELECT FROM " + table + ") THEN " + quoteLiteral(table) + " END"
	}
	usedSQL = "SELECT ARRAY[]::text[]"
	if len(used) > 0 {
		usedSQL = "SELECT array_remove(ARRAY[" + strings.Join(used, ", ") + "]::text[], NULL)"
	}
	return objects, kept, usedSQL, nil
}

// quoteLiteral returns s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// userSchemas selects the namespaces of a database that are not
// PostgreSQL's own.
const userSchemas = `SELECT oid FROM pg_namespace
	WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg\_temp\_%' AND nspname NOT LIKE 'pg\_toast\_temp\_%'`

// objectsSQL lists a database's own schemas, relations (tables, indexes,
// views, sequences...), functions and types, by name and kind, as one
// string: a reset refuses a database where it differs from the prepared
// one's.
const objectsSQL = `SELECT concat_ws(E'\n',
	(SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE oid IN (` + userSchemas + `)),
	(SELECT string_agg(o, ',' ORDER BY o) FROM (SELECT relnamespace::regnamespace::text || '.' || relname || ':' || relkind::text AS o FROM pg_class WHERE relnamespace IN (` + userSchemas + `)) c),
	(SELECT string_agg(o, ',' ORDER BY o) FROM (SELECT oid::regprocedure::text AS o FROM pg_proc WHERE pronamespace IN (` + userSchemas + `)) p),
	(SELECT string_agg(o, ',' ORDER BY o) FROM (SELECT typnamespace::regnamespace::text || '.' || typname AS o FROM pg_type WHERE typnamespace IN (` + userSchemas + `)) t))`

// tableListSQL lists a database's own tables, quoted and qualified, one a
// row, each before the tables it references by a foreign key: ordered by
// the longest chain of references that leads from it (so rows can be
// deleted in this order), then by name. (A cycle of references ends the
// chain at 100 links; deleting then fails, and a reset with it.)
const tableListSQL = `WITH RECURSIVE tables AS (
		SELECT oid FROM pg_class WHERE relkind = 'r' AND relnamespace IN (` + userSchemas + `)
	), refs AS (
		SELECT conrelid AS child, confrelid AS parent FROM pg_constraint WHERE contype = 'f' AND conrelid <> confrelid
	), chain(rel, links) AS (
		SELECT oid, 0 FROM tables
		UNION ALL
		SELECT refs.child, chain.links + 1 FROM chain JOIN refs ON refs.parent = chain.rel WHERE chain.links < 100
	)
	SELECT rel::regclass::text AS t FROM chain WHERE rel IN (SELECT oid FROM tables) GROUP BY rel ORDER BY max(links) DESC, t`
