package problems_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// newStore opens a fresh store in a temporary folder.
func newStore(tb testing.TB) *problems.Store {
	tb.Helper()
	db, err := state.Open(context.Background(), filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return problems.NewStore(db)
}

func mustCreate(tb testing.TB, s *problems.Store, n problems.New) problems.Code {
	tb.Helper()
	if n.Repo == "" {
		n.Repo = "demo"
	}
	if n.Kind == "" {
		n.Kind = problems.GateFailed
	}
	if n.Summary == "" {
		n.Summary = "gate fast failed: 2 tests"
	}
	c, err := s.Create(context.Background(), n)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
