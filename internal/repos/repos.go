// Package repos keeps the registry of repositories agentkit serves, each under a short unique name.
package repos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

// Repo is one registered repository.
type Repo struct {
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"created_at"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,39}$`)

// ValidateName checks a repository's short name.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a usable repository name: use 1 to 40 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// DefaultName derives a short name from a folder's name.
func DefaultName(path string) string {
	base := strings.ToLower(filepath.Base(path))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	name := strings.TrimLeft(b.String(), "._-")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "repo"
	}
	return name
}

// Register records a repository under name. Registering the same path under
// the same name again changes nothing and returns created false.
func Register(ctx context.Context, db *state.DB, name, path string, now time.Time) (Repo, bool, error) {
	if err := ValidateName(name); err != nil {
		return Repo{}, false, err
	}
	var out Repo
	var created bool
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if r, err := byPath(ctx, tx, path); err == nil {
			if r.Name != name {
				return fmt.Errorf("%s is already registered as %q; run agentkit init without --name, or with --name %s", path, r.Name, r.Name)
			}
			out = r
			return nil
		} else if !errors.Is(err, state.ErrNotFound) {
			return err
		}
		if r, err := byName(ctx, tx, name); err == nil {
			return fmt.Errorf("the name %q is taken by %s; choose another with --name", name, r.Path)
		} else if !errors.Is(err, state.ErrNotFound) {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO repos (name, path, created_at) VALUES (?, ?, ?)", name, path, state.Now(now)); err != nil {
			return fmt.Errorf("registering %s: %w", path, err)
		}
		out, created = Repo{Name: name, Path: path, CreatedAt: now.UTC()}, true
		return nil
	})
	return out, created, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func scanOne(row *sql.Row) (Repo, error) {
	var r Repo
	var at string
	if err := row.Scan(&r.Name, &r.Path, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Repo{}, state.ErrNotFound
		}
		return Repo{}, fmt.Errorf("reading the repository registry: %w", err)
	}
	r.CreatedAt = state.ParseTime(at)
	return r, nil
}

func byPath(ctx context.Context, q querier, path string) (Repo, error) {
	return scanOne(q.QueryRowContext(ctx, "SELECT name, path, created_at FROM repos WHERE path = ?", path))
}

func byName(ctx context.Context, q querier, name string) (Repo, error) {
	return scanOne(q.QueryRowContext(ctx, "SELECT name, path, created_at FROM repos WHERE name = ?", name))
}

// ByPath returns the repository registered at path, or state.ErrNotFound.
func ByPath(ctx context.Context, db *state.DB, path string) (Repo, error) {
	return byPath(ctx, db, path)
}

// ByName returns the repository registered under name, or an error saying
// which names exist.
func ByName(ctx context.Context, db *state.DB, name string) (Repo, error) {
	r, err := byName(ctx, db, name)
	if errors.Is(err, state.ErrNotFound) {
		all, _ := List(ctx, db)
		names := make([]string, len(all))
		for i, a := range all {
			names[i] = a.Name
		}
		if len(names) == 0 {
			return Repo{}, fmt.Errorf("no repository %q: none is registered yet (run agentkit init in one)", name)
		}
		return Repo{}, fmt.Errorf("no repository %q; registered: %s", name, strings.Join(names, ", "))
	}
	return r, err
}

// List returns every registered repository by name.
func List(ctx context.Context, db *state.DB) ([]Repo, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, path, created_at FROM repos ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("reading the repository registry: %w", err)
	}
	defer rows.Close()
	var out []Repo
	for rows.Next() {
		var r Repo
		var at string
		if err := rows.Scan(&r.Name, &r.Path, &at); err != nil {
			return nil, err
		}
		r.CreatedAt = state.ParseTime(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
