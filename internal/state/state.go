// Package state opens agentkit's machine-wide SQLite store and keeps its schema current.
package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver
)

// DB is the open state store.
type DB struct {
	*sql.DB
	// Path is the database file.
	Path string
}

// Home returns $AGENTKIT_HOME, or ~/.agentkit when it is unset.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("AGENTKIT_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home folder (set AGENTKIT_HOME instead): %w", err)
	}
	return filepath.Join(home, ".agentkit"), nil
}

// BusyTimeout is how long a statement waits for another process's write lock.
const BusyTimeout = 10 * time.Second

// Open opens (creating when needed) the store at path and applies its migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the state folder: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// Every transaction takes the write lock at BEGIN: a read that later
	// writes is where "database is locked" comes from otherwise.
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the state store %s: %w", path, err)
	}
	db := &DB{DB: sqldb, Path: path}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	_ = os.Chmod(path, 0o600)
	return db, nil
}

// OpenHome opens the store under the agentkit home folder.
func OpenHome(ctx context.Context, getenv func(string) string) (*DB, error) {
	home, err := Home(getenv)
	if err != nil {
		return nil, err
	}
	return Open(ctx, filepath.Join(home, "state.db"))
}

// Tx runs fn in one write transaction (BEGIN IMMEDIATE), committing when fn
// returns nil and rolling back otherwise.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting a state transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing a state transaction: %w", err)
	}
	return nil
}

// DataVersion returns SQLite's data_version on a dedicated connection, which
// changes whenever another connection commits: a cheap way to notice writes.
func (db *DB) DataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading data_version: %w", err)
	}
	return v, nil
}

// ErrNotFound is returned by lookups that find no row.
var ErrNotFound = errors.New("state: not found")

// Now formats t as the store keeps times: UTC RFC 3339 with nanoseconds.
func Now(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads a time written by Now; an empty string is the zero time.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
