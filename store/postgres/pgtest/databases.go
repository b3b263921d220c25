package pgtest

import (
	"context"
	"errors"
	"testing"
)

// Databases hands out fresh databases to the tests of a long suite (such as
// the conformance suite, a database for each of its cases) without making
// them wait for PostgreSQL. Given a prepare function, each database is a
// copy of one it prepared once (CREATE DATABASE ... TEMPLATE, so a store's
// migrations run once, not for every test); the next one is made while a
// test runs, and each used one is dropped in the background. Every
// database it hands out is new, as [NewDatabase]'s are; the owner's cleanup
// (the test given to [NewDatabases]) drops the one made ahead and the
// prepared one, and waits until every drop is done, reporting a failed one
// as the owner's error.
//
// Its tests may run in parallel. New must not be called once the owner's
// cleanup has begun.
type Databases struct {
	admin    string
	alter    []string
	template string      // the prepared database copied, or ""
	copyWith string      // the options of CREATE DATABASE that copy it
	ahead    chan made   // the database made ahead of the next New
	drops    chan string // names to drop, closed by the owner's cleanup
	done     chan error  // the dropper's joined errors, once drops is closed
}

// made is a database made ahead, or why it could not be.
type made struct {
	name, url string
	err       error
}

// NewDatabases returns a source of fresh databases on the server of
// [AdminURL] for the tests under t. prepare, if not nil, runs once, on the
// database every one handed out is a copy of (it must close its
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
		ahead: make(chan made, 1),
		drops: make(chan string, 64),
		done:  make(chan error, 1),
	}
	if prepare != nil {
		name, url, err := create(d.admin, "", nil)
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		err = prepare(ctx, url)
		cancel()
		if err != nil {
			t.Fatalf("pgtest: preparing database %s: %v", name, errors.Join(err, drop(d.admin, name)))
		}
		d.template, d.copyWith = name, "TEMPLATE "+name
		// A file copy is faster than the default, WAL_LOG (PostgreSQL 15
		// and later), for a database as small as a test's.
		version, err := serverVersion(d.admin)
		if err != nil {
			t.Fatalf("pgtest: %v", errors.Join(err, drop(d.admin, name)))
		}
		if version >= 150000 {
			d.copyWith += " STRATEGY FILE_COPY"
		}
	}
	go d.makeAhead()
	go func() {
		var errs []error
		for name := range d.drops {
			errs = append(errs, drop(d.admin, name))
		}
		d.done <- errors.Join(errs...)
	}()
	t.Cleanup(func() {
		// One database is always made, or being made, ahead.
		if m := <-d.ahead; m.err == nil {
			d.drops <- m.name
		}
		if d.template != "" {
			d.drops <- d.template
		}
		close(d.drops)
		if err := <-d.done; err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return d
}

// makeAhead makes the database the next New hands out.
func (d *Databases) makeAhead() {
	var m made
	m.name, m.url, m.err = create(d.admin, d.copyWith, d.alter)
	d.ahead <- m
}

// New returns the URL of a fresh database of t's own. Its drop is queued by
// a cleanup of t, so it comes after the cleanups registered later (closing
// a store opened on it, say). It fails t when the database could not be
// created.
func (d *Databases) New(t testing.TB) string {
	t.Helper()
	m := <-d.ahead
	go d.makeAhead()
	if m.err != nil {
		t.Fatalf("pgtest: %v", m.err)
	}
	t.Cleanup(func() { d.drops <- m.name })
	return m.url
}
