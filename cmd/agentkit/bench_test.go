package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// BenchmarkProblemList measures agentkit problem list over 10,000 open
// problems as the command runs it: open the store, query, render the table.
func BenchmarkProblemList(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		name := "table"
		if asJSON {
			name = "json"
		}
		b.Run(name, func(b *testing.B) {
			home := b.TempDir()
			seedProblems(b, filepath.Join(home, "state.db"), 10000)
			ios := &ioStreams{Out: io.Discard, Err: io.Discard, Getenv: func(k string) string {
				if k == "AGENTKIT_HOME" {
					return home
				}
				return ""
			}, Now: time.Now}
			opts := &problemListOptions{ios: ios, JSON: asJSON}
			b.ResetTimer()
			for b.Loop() {
				if err := problemListRun(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func seedProblems(b *testing.B, path string, n int) {
	ctx := context.Background()
	db, err := state.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := problems.NewStore(db)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for range n {
		if _, err := s.CreateTx(ctx, tx, problems.New{Repo: "shop", Job: "j1", Task: "parser", Kind: problems.GateFailed,
			Summary: "gate fast failed: TestParse expected 3 got 4", LogTail: "--- FAIL: TestParse\nFAIL\n"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
