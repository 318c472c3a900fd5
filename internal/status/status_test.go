package status_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
)

func TestRead(t *testing.T) {
	ctx := context.Background()
	db, err := state.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repos.Register(ctx, db, "blog", "/b", time.Now())
	repos.Register(ctx, db, "shop", "/s", time.Now())
	ps := problems.NewStore(db)
	for range 2 {
		if _, err := ps.Create(ctx, problems.New{Repo: "shop", Kind: problems.Crashed, Summary: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	ps.SetPaused(ctx, "blog", true, "me", problems.Terminal)
	st, err := status.Read(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if st.OpenProblems != 2 || st.PausedAll || len(st.Repos) != 2 {
		t.Fatalf("%+v", st)
	}
	if b := st.Repos[0]; b.Name != "blog" || !b.Paused || b.PausedBy != "me (terminal)" || b.OpenProblems != 0 {
		t.Fatalf("%+v", b)
	}
	if s := st.Repos[1]; s.Name != "shop" || s.Paused || s.OpenProblems != 2 {
		t.Fatalf("%+v", s)
	}
	ps.SetPaused(ctx, "", true, "o@x", problems.Email)
	st, _ = status.Read(ctx, db)
	if !st.PausedAll || !st.Repos[1].Paused {
		t.Fatalf("%+v", st)
	}
}
