package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// createsData reports whether the command named name (as lookup takes it)
// may create the data it works on when -data or -db holds none: serve and
// project create do. Every other command works on existing data only, so
// that one run in the wrong directory, or with a mistyped -data, fails
// instead of starting a new, empty deployment with a master key of its own.
func createsData(name string) bool {
	return name == "serve" || name == "project create"
}

// errNoData is the error of a command that found no Latchkey data where
// -data or -db points.
var errNoData = errors.New("no Latchkey data")

// requireData returns an error matching errNoData, saying where it looked,
// when the flags name no Latchkey data: with -db, a database without
// Latchkey's schema; else a data directory without the SQLite database.
// It creates nothing.
func (s *storeFlags) requireData(ctx context.Context, logger *slog.Logger) error {
	const hint = `give -data DIR or -db URL of an existing deployment, or create one with "serve" or "project create NAME"`
	if s.db != "" {
		var (
			has  bool
			err  error
			kind string
		)
		switch {
		case strings.HasPrefix(s.db, "postgres://"), strings.HasPrefix(s.db, "postgresql://"):
			kind = "PostgreSQL"
			has, err = postgresHasSchema(ctx, s.db, logger)
		case strings.HasPrefix(s.db, "mysql://"):
			kind = "MySQL"
			has, err = mysqlHasSchema(ctx, s.db, logger)
		default:
			return nil // refused by openStore
		}
		if err != nil {
			return err
		}
		if !has {
			return fmt.Errorf("%w in the %s database %s (it has no projects table); %s", errNoData, kind, redactDBURL(s.db), hint)
		}
		return nil
	}
	path := filepath.Join(s.data, dbFile)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w at -data %s (looked for %s); %s", errNoData, s.data, path, hint)
	case err != nil:
		return fmt.Errorf("looking for the database: %w", err)
	case fi.IsDir():
		return fmt.Errorf("%w at -data %s (%s is a directory, not a database)", errNoData, s.data, path)
	}
	return nil
}

// postgresHasSchema reports whether the PostgreSQL database at dbURL holds
// Latchkey's schema (its projects table), without migrating anything.
func postgresHasSchema(ctx context.Context, dbURL string, logger *slog.Logger) (bool, error) {
	st, err := postgres.Open(ctx, dbURL, &postgres.Options{Logger: logger, NoMigrate: true})
	if err != nil {
		return false, fmt.Errorf("opening PostgreSQL: %w", err)
	}
	defer st.Close()
	_, err = st.ListProjects(ctx)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading the projects: %w", err)
	}
	return true, nil
}

// mysqlHasSchema reports whether the MySQL or MariaDB database at dbURL
// holds Latchkey's schema (its projects table), without migrating anything.
func mysqlHasSchema(ctx context.Context, dbURL string, logger *slog.Logger) (bool, error) {
	st, err := mysql.Open(ctx, dbURL, &mysql.Options{Logger: logger, NoMigrate: true})
	if err != nil {
		return false, fmt.Errorf("opening MySQL: %w", err)
	}
	defer st.Close()
	_, err = st.ListProjects(ctx)
	var myErr *mysqldriver.MySQLError
	switch {
	case errors.As(err, &myErr) && myErr.Number == 1146: // ER_NO_SUCH_TABLE
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading the projects: %w", err)
	}
	return true, nil
}

// redactDBURL returns the database URL without its password and query
// parameters (which may carry one), for messages.
func redactDBURL(db string) string {
	u, err := url.Parse(db)
	if err != nil {
		return "(the -db URL)"
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		r.User = url.User(u.User.Username())
	}
	return r.String()
}

// helpRequest is the error of a command line that asked for a command's
// help (-h or -help): run prints the command's usage and its flags, with
// their defaults, to stderr. It matches flag.ErrHelp.
type helpRequest struct {
	fs *flag.FlagSet
}

func (h *helpRequest) Error() string        { return flag.ErrHelp.Error() }
func (h *helpRequest) Is(target error) bool { return target == flag.ErrHelp }

// hiddenFlags are flags that help does not list: they exist for the
// benchmarks, not for users.
var hiddenFlags = map[string]bool{"login-address-limit": true}

// print writes the command's usage lines and its flags to w.
func (h *helpRequest) print(w io.Writer) {
	fmt.Fprint(w, usageOf(h.fs.Name()))
	fmt.Fprintln(w, "flags:")
	h.fs.VisitAll(func(f *flag.Flag) {
		if hiddenFlags[f.Name] {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			line += " (default " + f.DefValue + ")"
		}
		fmt.Fprintln(w, line)
	})
}
