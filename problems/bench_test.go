package problems_test

import (
	"context"
	"testing"

	"github.com/agentkit/agentkit/problems"
)

// BenchmarkList lists 10,000 open problems from the store.
func BenchmarkList(b *testing.B) {
	s := newStore(b)
	ctx := context.Background()
	tx, _ := s.DB().BeginTx(ctx, nil)
	for range 10000 {
		if _, err := s.CreateTx(ctx, tx, problems.New{Repo: "r", Kind: problems.Crashed, Summary: "crashed"}); err != nil {
			b.Fatal(err)
		}
	}
	tx.Commit()
	for b.Loop() {
		list, err := s.List(ctx, problems.Filter{})
		if err != nil || len(list) != 10000 {
			b.Fatal(len(list), err)
		}
	}
}

// BenchmarkAnswer records one decision per iteration on a fresh problem;
// every 1,024th iteration also creates the next 1,024 problems.
func BenchmarkAnswer(b *testing.B) {
	s := newStore(b)
	ctx := context.Background()
	codes := make([]problems.Code, 0, 1024)
	next := func() problems.Code {
		if len(codes) == 0 {
			tx, _ := s.DB().BeginTx(ctx, nil)
			for range 1024 {
				c, err := s.CreateTx(ctx, tx, problems.New{Repo: "r", Kind: problems.Crashed, Summary: "crashed"})
				if err != nil {
					b.Fatal(err)
				}
				codes = append(codes, c)
			}
			tx.Commit()
		}
		c := codes[len(codes)-1]
		codes = codes[:len(codes)-1]
		return c
	}
	for b.Loop() {
		c := next()
		if _, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Terminal, Who: "me"}); err != nil {
			b.Fatal(err)
		}
	}
}
