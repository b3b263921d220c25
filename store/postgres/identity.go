package postgres

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The database's identity binds what the store keeps in memory about the
// database's state (the token records of keptRecords, the revocation
// watcher's connection) to the server that state came from. A snapshot's
// text names a state only within one server's history: a promoted standby
// hands out again the transaction ids its old primary handed out after the
// last one it replayed, so its snapshots can repeat, character for
// character, snapshots of the old primary that saw other commits.
//
// The identity of a connection is read once, when the pool opens it
// (identitySQL, run by [Store.afterConnect]), and kept in the session
// itself, as the custom setting identitySetting. A statement that compares
// a snapshot with the one records were read in compares the identity too,
// reading it from the session it runs on (current_setting), so the
// comparison is exact for the connection the statement actually runs on,
// whichever lane of the pipeline sends it, and even behind a pooler that
// hands statements to other server sessions: a session where the setting
// was not made has no identity.
//
// The identity is system_identifier/timeline/start: the cluster's
// system_identifier (pg_control_system(); the same on a primary and every
// standby made from it), the timeline WAL is written on (the first eight
// hex digits of the current WAL file's name; a promotion starts a new one
// at once, where pg_control_checkpoint()'s timeline_id changes only at the
// first checkpoint after it), and the server's start time
// (pg_postmaster_start_time(), in microseconds), which tells apart two
// servers cloned from one another, and a server from itself before a
// restart. Any role may call these functions (PostgreSQL 13 and newer).
//
// A connection opened while the server is in recovery (a hot standby, whose
// snapshots do not show the transactions in progress on its primary) gets
// the empty identity, and so does one whose identity could not be read (a
// server without these functions, a role they are revoked from): the
// records of a statement on it are always read, and never kept.

// identitySetting is the custom setting that holds a session's identity.
const identitySetting = "latchkey.db_identity"

// identitySQL reads the server's identity and sets it as the session's
// identitySetting (session-level: it lasts as long as the connection),
// or the empty identity while the server is in recovery. It returns the
// identity set.
const identitySQL = `SELECT set_config('` + identitySetting + `',
	CASE WHEN pg_is_in_recovery() THEN '' ELSE
	s.system_identifier::text || '/' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' ||
	(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint::text END, false)
	FROM pg_control_system() s`

// sessionIdentitySQL is the identity of the session a statement runs on, as
// an SQL expression: the empty text when it has none.
const sessionIdentitySQL = `coalesce(current_setting('` + identitySetting + `', true), '')`

// identity tracks the identity the store's connections last reported.
type identity struct {
	mu      sync.Mutex
	current string // guarded by mu
	// warned is set once the failure to read an identity was logged.
	warned bool // guarded by mu
}

// saw records id, the identity of a new connection or of a statement's
// session, and reports whether it is another than the one seen last (and
// not the first seen). The empty identity changes nothing.
func (i *identity) saw(id string) (changed bool) {
	if id == "" {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	changed = i.current != "" && i.current != id
	i.current = id
	return changed
}

// afterConnect is the pool's AfterConnect: it reads the new connection's
// identity into its session (identitySQL) and, when it is another than the
// one seen last, drops what the store keeps about the database's state.
// An identity the server refuses to give is logged once and leaves the
// session without one, so its statements never reuse kept records; an
// error of the connection itself fails the connection.
func (s *Store) afterConnect(ctx context.Context, c *pgx.Conn) error {
	var id string
	if err := c.QueryRow(ctx, identitySQL).Scan(&id); err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			return err
		}
		s.ident.mu.Lock()
		warn := !s.ident.warned
		s.ident.warned = true
		s.ident.mu.Unlock()
		if warn {
			s.log.Warn("postgres: cannot read the database's identity; the token records of every checked read will be read",
				"err", wrap("read database identity", err))
		}
		return nil
	}
	s.sawIdentity(id)
	return nil
}

// sawIdentity records id, the identity of one of the store's sessions,
// and drops what the store keeps about the database's state when it is
// another than the one seen last: the kept token records, and the
// revocation watcher's connection (its waiters wake and read the feed
// again, and it listens again, on the database the pool now reaches).
func (s *Store) sawIdentity(id string) {
	if !s.ident.saw(id) {
		return
	}
	s.kept.reset()
	if s.watch != nil {
		s.watch.reconnect()
	}
	s.log.Warn("postgres: the database's identity changed (a failover, a restart or another server); dropped what was kept about its state")
}
