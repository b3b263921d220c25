package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// Storage defaults.
const (
	defaultDataDir = "./latchkey-data"
	dbFile         = "latchkey.db"
	masterKeyFile  = "master.key"
	masterKeyEnv   = "LATCHKEY_MASTER_KEY"
)

// storeFlags are the -data and -db flags every command takes.
type storeFlags struct {
	data string
	db   string
}

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.data, "data", defaultDataDir, "directory of the SQLite database and master.key")
	fs.StringVar(&s.db, "db", "", "PostgreSQL (postgres://...) or MySQL/MariaDB (mysql://user:pass@host:port/db) URL to use instead of SQLite")
}

// check refuses an empty -db given on purpose: it would silently use SQLite
// instead of the database meant (an unset variable in a script).
func (s *storeFlags) check(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "db" && s.db == "" {
			err = usagef(fs.Name(), "-db is empty; give a postgres:// or mysql:// URL, or leave -db out to use SQLite in -data")
		}
	})
	return err
}

// instance is an opened store and the Latchkey on it.
type instance struct {
	st store.Store
	lk *latchkey.Latchkey
}

// Close stops Latchkey's background work, then closes the store.
func (i *instance) Close() error {
	_ = i.lk.Close()
	return i.st.Close()
}

// open opens the store the flags name and assembles Latchkey on it with the
// options o (Logger set to logger), which makes sure the default project
// exists. Unless env.creates, it first refuses, creating nothing, when the
// flags name no Latchkey data (requireData). tune, if not nil, may
// adjust the options once the store is open (the serve command sets a
// throttling limiter on it).
func (s *storeFlags) open(ctx context.Context, env *env, logger *slog.Logger, o latchkey.Options, tune func(st store.Store, o *latchkey.Options)) (*instance, error) {
	if !env.creates {
		if err := s.requireData(ctx, logger); err != nil {
			return nil, err
		}
	}
	raw, err := s.openStore(ctx, logger)
	if err != nil {
		return nil, err
	}
	// Every command reads and writes through the checking layer, as
	// latchkey.New does.
	var st store.Store = store.Check(raw)
	key, err := loadMasterKey(ctx, env, s.data, st)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	o.Logger = logger
	if tune != nil {
		tune(st, &o)
	}
	lk, err := latchkey.New(st, key, &o)
	if err != nil {
		_ = st.Close()
		if errors.Is(err, keys.ErrWrongMasterKey) {
			return nil, wrongMasterKey(env, s.data)
		}
		return nil, err
	}
	return &instance{st: st, lk: lk}, nil
}

// openStore opens PostgreSQL or MySQL when -db is set (by the URL's
// scheme), else SQLite in the data directory, creating the directory (mode
// 0700) if needed. (A SQLite store opens its reader connections as reads
// need them, so a one-shot command opens few.)
func (s *storeFlags) openStore(ctx context.Context, logger *slog.Logger) (store.Store, error) {
	switch {
	case strings.HasPrefix(s.db, "postgres://") || strings.HasPrefix(s.db, "postgresql://"):
		st, err := postgres.Open(ctx, s.db, &postgres.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("opening PostgreSQL: %w", err)
		}
		return st, nil
	case strings.HasPrefix(s.db, "mysql://"):
		st, err := mysql.Open(ctx, s.db, &mysql.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("opening MySQL: %w", err)
		}
		return st, nil
	case s.db != "":
		return nil, usagef("", "-db must be a postgres:// or mysql:// URL")
	}
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(s.data, dbFile), &sqlite.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	return st, nil
}

// wrongMasterKey says which master key does not open the stored signing
// keys, and what to do.
func wrongMasterKey(env *env, dir string) error {
	path := filepath.Join(dir, masterKeyFile)
	if env.getenv(masterKeyEnv) != "" {
		return fmt.Errorf("the master key in %s does not open the stored signing keys (another key made them); "+
			"%s is used instead of %s while it is set: set it to the key that made them, or unset it", masterKeyEnv, masterKeyEnv, path)
	}
	return fmt.Errorf("the master key in %s does not open the stored signing keys (another key made them); "+
		"put back the key that made them, or set %s to it", path, masterKeyEnv)
}

// loadMasterKey returns the master key: LATCHKEY_MASTER_KEY if set, else the
// content of DIR/master.key, which is created (mode 0600, base64 of 32
// random bytes) if it does not exist and st holds no sealed signing key yet:
// a new key beside a database sealed with another could open nothing. Two
// processes creating it at once agree on one key.
func loadMasterKey(ctx context.Context, env *env, dir string, st store.Store) ([]byte, error) {
	if v := env.getenv(masterKeyEnv); v != "" {
		key, err := decodeMasterKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", masterKeyEnv, err)
		}
		return key, nil
	}
	path := filepath.Join(dir, masterKeyFile)
	for attempt := 0; ; attempt++ {
		b, err := os.ReadFile(path)
		if err == nil {
			key, err := decodeMasterKey(string(b))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
				fmt.Fprintf(env.stderr, "latchkey: warning: %s is readable by other users (mode %v); chmod 600 it\n", path, fi.Mode().Perm())
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt > 0 {
			return nil, fmt.Errorf("reading the master key: %w", err)
		}
		sealed, err := hasSealedKeys(ctx, st)
		if err != nil {
			return nil, err
		}
		if sealed {
			return nil, fmt.Errorf("%s does not exist, but the database already holds signing keys sealed with a master key: "+
				"set %s to that key (base64), or put it back in %s; a new key could open none of them", path, masterKeyEnv, path)
		}
		if err := createMasterKey(dir, path); err != nil {
			return nil, err
		}
	}
}

// hasSealedKeys reports whether any project of st has a signing key.
func hasSealedKeys(ctx context.Context, st store.Store) (bool, error) {
	ps, err := st.ListProjects(ctx)
	if err != nil {
		return false, fmt.Errorf("reading the projects: %w", err)
	}
	for _, p := range ps {
		ks, err := st.ListSigningKeys(ctx, p.ID)
		if err != nil {
			return false, fmt.Errorf("reading the signing keys: %w", err)
		}
		if len(ks) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// createMasterKey writes a new random key to path unless it exists. The key
// is written to a temporary file and linked into place, so no process ever
// reads a partly written key and a concurrent creator's key wins cleanly.
func createMasterKey(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	var key [keys.MasterKeySize]byte
	_, _ = rand.Read(key[:])
	tmp, err := os.CreateTemp(dir, ".master.key-*")
	if err != nil {
		return fmt.Errorf("creating the master key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("creating the master key: %w", err)
	}
	if _, err := tmp.WriteString(base64.StdEncoding.EncodeToString(key[:]) + "\n"); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("creating the master key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("creating the master key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("creating the master key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the master key: %w", err)
	}
	return nil
}

// decodeMasterKey decodes base64 (standard or URL alphabet, padded or not)
// of exactly 32 bytes, ignoring surrounding white space.
func decodeMasterKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if err := keys.CheckMasterKey(b); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	return nil, errors.New("the master key is not valid base64")
}

// shutdownTimeout bounds how long a stopping server waits for in-flight
// requests.
const shutdownTimeout = 30 * time.Second
