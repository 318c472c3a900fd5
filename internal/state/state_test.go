package state

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenMigratesAndReopens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion() || v == 0 {
		t.Fatalf("user_version %d, %v; want %d", v, err, SchemaVersion())
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q %v", mode, err)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys %d %v", fk, err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	db.Close()
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "upgrade agentkit") {
		t.Fatalf("want an upgrade message, got %v", err)
	}
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			db.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestTxRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := sql.ErrNoRows
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec("INSERT INTO settings(key, value) VALUES ('a', 'b')"); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("got %v", err)
	}
	var n int
	db.QueryRow("SELECT count(*) FROM settings").Scan(&n)
	if n != 0 {
		t.Fatalf("rolled-back row is there: %d", n)
	}
}

func TestHome(t *testing.T) {
	env := map[string]string{"AGENTKIT_HOME": "/tmp/akh"}
	h, err := Home(func(k string) string { return env[k] })
	if err != nil || h != "/tmp/akh" {
		t.Fatalf("%q %v", h, err)
	}
	h, err = Home(func(string) string { return "" })
	if err != nil || !strings.HasSuffix(h, ".agentkit") {
		t.Fatalf("%q %v", h, err)
	}
}
