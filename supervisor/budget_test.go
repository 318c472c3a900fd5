package supervisor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
	"github.com/agentkit/agentkit/supervisor"
)

// tokenRuntime is a runtime that does a task's work at once and reports the
// tokens it spent, as a paid provider would.
type tokenRuntime struct{ input, output int64 }

func (tokenRuntime) Name() string                            { return "command" }
func (tokenRuntime) Version(context.Context) (string, error) { return "test", nil }
func (tokenRuntime) Path() (string, error)                   { return "/bin/true", nil }

func (r tokenRuntime) Run(ctx context.Context, req runtimes.Request) (runtimes.Outcome, error) {
	task := ""
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, runtimes.EnvTask+"="); ok {
			task = v
		}
	}
	if err := os.WriteFile(filepath.Join(req.Dir, task+".txt"), []byte(task+"\n"), 0o644); err != nil {
		return runtimes.Outcome{}, err
	}
	return runtimes.Outcome{SessionID: "s-" + task, FinalText: `{"agentkit": {"status": "done"}}`,
		Usage: runtimes.Usage{Input: r.input, Output: r.output}}, nil
}

func TestTokenBudgetStopsNewLaunches(t *testing.T) {
	t.Parallel()
	factory := func(name string, cfg project.RuntimeConfig, opts runtimes.Options) (runtimes.Runtime, error) {
		return tokenRuntime{input: 500, output: 100}, nil
	}
	w := newWorld(t, worldOpts{workers: 1, extra: "budget: {job_tokens: 1000}\n", factory: factory})
	w.job("j1", `tasks:
  - {id: a, job_id: j1, kind: SAFE_PARALLEL}
  - {id: b, job_id: j1, kind: SAFE_PARALLEL}
  - {id: c, job_id: j1, kind: SAFE_PARALLEL}
`)
	w.start()
	w.waitTask("j1", "b", "merged")
	w.waitFor("c to be held back", func() bool { return w.hasEvent("c", "over its token budget (1200 of 1000 tokens)") })
	if r := w.task("j1", "a"); r.State != "merged" {
		t.Errorf("the work so far is not kept: %+v", r)
	}
	if r := w.task("j1", "c"); r.State != "ready" {
		t.Errorf("c: %+v", r)
	}
	var tokens int64
	must(t, w.db.QueryRow("SELECT tokens FROM jobs WHERE name = 'j1'").Scan(&tokens))
	if tokens != 1200 {
		t.Errorf("job tokens %d", tokens)
	}
}

func TestFinalReviewOnceAddsAFixTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{review: "once"})
	w.script("final-review", `if [ "$1" = 1 ]; then
  echo '{"agentkit": {"verdict": "changes", "findings": ["the README does not mention the calendar"]}}'
else
  echo '{"agentkit": {"verdict": "pass"}}'
fi`)
	w.job("j1", "tasks:\n  - {id: cal, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	w.waitJobDone("j1")
	if w.calls("final-review") != 2 {
		t.Errorf("final review ran %d times", w.calls("final-review"))
	}
	if r := w.task("j1", "j1-review-1"); r.State != "merged" {
		t.Fatalf("fix task: %+v", r)
	}
	if pr := w.prompt("j1-review-1", 1); !strings.Contains(pr, "the README does not mention the calendar") {
		t.Errorf("the fix task lacks the findings:\n%s", pr)
	}
	if pr := w.prompt("final-review", 1); !strings.Contains(pr, "+cal 1") {
		t.Errorf("the final review was not shown the combined change:\n%s", pr)
	}
	if pr := w.prompt("final-review", 2); !strings.Contains(pr, "review round 2") || !strings.Contains(pr, "+j1-review-1 1") {
		t.Errorf("round 2 does not review the fix:\n%s", pr)
	}
	if w.calls("review-cal") != 0 {
		t.Error("review once reviewed a single task")
	}
}

func TestReviewerWithoutVerdictIsAProblem(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{review: "ai"})
	w.script("review-x", `echo "I looked at it and it seems fine I guess"`)
	w.job("j1", "tasks:\n  - {id: x, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	p := w.problem("j1", "x")
	if p.Kind != "reviewer_failed" || strings.Join(verbs(p), " ") != "retry accept skip" {
		t.Fatalf("problem %s %v", p.Kind, p.Replies)
	}
	w.answer(p.Code, "accept")
	w.waitJobDone("j1")
}

// panicRuntime stands for a bug: its Run panics.
type panicRuntime struct{ tokenRuntime }

func (panicRuntime) Run(context.Context, runtimes.Request) (runtimes.Outcome, error) {
	panic("boom")
}

func TestPanicEndsRunWithAnError(t *testing.T) {
	t.Parallel()
	factory := func(string, project.RuntimeConfig, runtimes.Options) (runtimes.Runtime, error) {
		return panicRuntime{}, nil
	}
	w := newWorld(t, worldOpts{factory: factory})
	w.job("j1", "tasks:\n  - {id: x, job_id: j1, kind: SAFE_PARALLEL}\n")
	sup, err := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo, Runtimes: factory})
	must(t, err)
	err = sup.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "internal error in task x: boom") {
		t.Fatalf("Run: %v", err)
	}
	// The lock is released: a new supervisor can start.
	if _, err := os.Stat(supervisor.LockPath(w.root)); err != nil {
		t.Fatal(err)
	}
	again, _ := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo, Runtimes: func(string, project.RuntimeConfig, runtimes.Options) (runtimes.Runtime, error) {
		return tokenRuntime{}, nil
	}, UntilDone: true})
	if err := again.Run(context.Background()); err != nil {
		t.Fatalf("restart after the panic: %v", err)
	}
	if r := w.task("j1", "x"); r.State != "merged" {
		t.Errorf("x after the restart: %+v", r)
	}
}
