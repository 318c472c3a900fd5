package status_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
)

func TestJobsAndEvents(t *testing.T) {
	ctx := context.Background()
	db, err := state.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".ai"), 0o755)
	os.WriteFile(filepath.Join(root, ".ai", "project.yaml"), []byte("budget: {job_tokens: 100}\n"), 0o644)
	now := state.Now(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO jobs (id, repo, name, state, revision, planned_revision, tokens, hold, created_at, updated_at)
		VALUES (1, 'shop', 'cal', 'started', 2, 1, 150, 'setup_failed: npm is missing', ?, ?)`, now, now)
	exec(`INSERT INTO jobs (id, repo, name, state, revision, planned_revision, head, created_at, updated_at)
		VALUES (2, 'shop', 'old', 'done', 1, 1, 'abc123', ?, ?)`, now, now)
	exec(`INSERT INTO tasks (id, job_id, name, seq, spec, state, step, runtime, created_at, updated_at)
		VALUES (1, 1, 'store', 0, '{"id":"store","title":"Persist","kind":"SAFE_PARALLEL"}', 'merged', 'build', 'claude', ?, ?)`, now, now)
	exec(`INSERT INTO tasks (id, job_id, name, seq, spec, state, step, created_at, updated_at)
		VALUES (2, 1, 'api', 1, '{"id":"api","kind":"DEPENDENT","depends_on":["store"]}', 'stopped', 'check', ?, ?)`, now, now)
	for i, counted := range []int{1, 0, 1} {
		exec(`INSERT INTO attempts (job_id, task_id, step, runtime, token, owner, counted, started_at, ended_at) VALUES (1, 1, 'build', 'claude', ?, 1, ?, ?, ?)`,
			"t"+string(rune('a'+i)), counted, now, now)
	}
	exec(`INSERT INTO events (repo, job, task, at, kind, message) VALUES ('shop', 'cal', 'store', ?, 'state', 'building')`, now)
	exec(`INSERT INTO events (repo, job, task, at, kind, message) VALUES ('shop', 'cal', 'store', ?, 'merged', 'merged as abc')`, now)
	exec(`INSERT INTO events (repo, job, task, at, kind, message) VALUES ('blog', 'x', 'y', ?, 'state', 'elsewhere')`, now)
	ps := problems.NewStore(db)
	code, _ := ps.Create(ctx, problems.New{Repo: "shop", Job: "cal", Task: "api", Kind: problems.GateFailed, Summary: "gate fast failed"})
	ps.SetPaused(ctx, "shop", true, "me", problems.Email)

	jobs, err := status.Jobs(ctx, db, "shop", root, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	cal := jobs[0]
	if cal.Name != "cal" || !cal.Paused || !cal.OverBudget || cal.Held == "" || len(cal.Problems) != 1 || cal.Problems[0].Code != string(code) {
		t.Fatalf("%+v", cal)
	}
	notes := strings.Join(cal.Notes, "\n")
	for _, want := range []string{"paused by me (email)", "held: two tasks failed the same way", "over its token budget (150 of 100 tokens)", "re-planning (revision 2)", "1 open problem(s)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	store := cal.Tasks[0]
	if store.Name != "store" || store.Title != "Persist" || store.Attempts != 2 || store.Runtime != "claude" || store.LastEvent != "merged as abc" {
		t.Errorf("store: %+v", store)
	}
	if api := cal.Tasks[1]; api.State != "stopped" || api.DependsOn[0] != "store" || api.Attempts != 0 || api.LastEvent != "" {
		t.Errorf("api: %+v", api)
	}
	if old := jobs[1]; old.Paused || len(old.Notes) != 1 || !strings.Contains(old.Notes[0], "is at abc123") {
		t.Errorf("old: %+v", old)
	}
	if _, err := status.Jobs(ctx, db, "shop", root, "nope"); err == nil || !strings.Contains(err.Error(), `no job "nope"`) {
		t.Errorf("%v", err)
	}

	evs, err := status.Events(ctx, db, status.EventFilter{Repo: "shop", Job: "cal", Task: "store", Limit: 1})
	if err != nil || len(evs) != 1 || evs[0].Message != "merged as abc" {
		t.Fatalf("%+v %v", evs, err)
	}
	evs, _ = status.Events(ctx, db, status.EventFilter{})
	if len(evs) != 3 || evs[0].Message != "building" || evs[2].Repo != "blog" {
		t.Fatalf("all events, oldest first: %+v", evs)
	}
	repos.Register(ctx, db, "shop", root, time.Now())
	st, err := status.Read(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Repos) != 1 || len(st.Repos[0].Jobs) != 1 {
		t.Fatalf("%+v", st)
	}
	if j := st.Repos[0].Jobs[0]; j.Name != "cal" || j.State != "started" || j.Tasks != 2 || j.Merged != 1 || !j.Held {
		t.Errorf("summary of the unfinished job: %+v", j)
	}
}
