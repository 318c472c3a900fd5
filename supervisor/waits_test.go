package supervisor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/supervisor"
)

func TestUsageLimitWaitsForResetWithoutAttempt(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	clock := supervisor.NewFakeClock(start)
	w := newWorld(t, worldOpts{clock: clock})
	w.script("quota", `if [ "$1" = 1 ]; then echo "You have hit your usage limit. Resets in 42 minutes."; exit 1; fi
echo done > quota.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", "tasks:\n  - {id: quota, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	w.waitTask("j1", "quota", "waiting")
	var until string
	must(t, w.db.QueryRow("SELECT wait_until FROM tasks WHERE name = 'quota'").Scan(&until))
	if want := start.Add(42 * time.Minute).Format(time.RFC3339); !strings.HasPrefix(until, strings.TrimSuffix(want, "Z")) {
		t.Errorf("waits until %s; want the reset time %s", until, want)
	}
	if n := len(w.allProblems()); n != 0 {
		t.Fatalf("a usage limit made %d problem(s)", n)
	}
	if w.calls("quota") != 1 {
		t.Fatalf("called %d times before the reset", w.calls("quota"))
	}
	clock.Advance(43 * time.Minute)
	w.waitJobDone("j1")
	if w.calls("quota") != 2 {
		t.Errorf("called %d times; want 2", w.calls("quota"))
	}
	var counted, total int
	must(t, w.db.QueryRow("SELECT sum(counted), count(*) FROM attempts WHERE step = 'build'").Scan(&counted, &total))
	if counted != 1 || total != 2 {
		t.Errorf("attempts: %d counted of %d; the wait must not use one", counted, total)
	}
	if r := w.task("j1", "quota"); r.Retried != "" {
		t.Errorf("the wait used the automatic retry: %+v", r)
	}
	if n := len(w.allProblems()); n != 0 {
		t.Errorf("%d problem(s)", n)
	}
}

func TestSameSetupFailureHoldsJobUntilRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{workers: 3})
	setup := fmt.Sprintf(`if [ -e %s/fixed-$AGENTKIT_TASK ]; then echo ok > $AGENTKIT_TASK.txt; echo '{"agentkit": {"status": "done"}}'; exit 0; fi
echo "sh: npm: command not found"
printf '%%s\n' '{"agentkit": {"status": "setup_failed", "reason": "npm is not installed on this machine\nI tried npm ci"}}'`, w.dir)
	w.script("a", setup)
	w.script("b", setup)
	w.script("x", fmt.Sprintf(`i=0
while [ ! -e %s/release-x ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.03; done
echo x > x.txt
echo '{"agentkit": {"status": "done"}}'`, w.dir))
	w.job("j1", `tasks:
  - {id: a, job_id: j1, kind: SAFE_PARALLEL}
  - {id: b, job_id: j1, kind: SAFE_PARALLEL}
  - {id: x, job_id: j1, kind: SAFE_PARALLEL}
  - {id: d, job_id: j1, kind: DEPENDENT, depends_on: [x]}
`)
	w.start()
	pa := w.problem("j1", "a")
	pb := w.problem("j1", "b")
	if pa.Kind != "setup_failed" || strings.Join(verbs(pa), " ") != "retry hint skip" || !strings.Contains(pa.Summary, "npm is not installed") {
		t.Fatalf("problem %s %v %q", pa.Kind, pa.Replies, pa.Summary)
	}
	w.waitFor("the job to be held", func() bool {
		var hold string
		must(t, w.db.QueryRow("SELECT hold FROM jobs WHERE name = 'j1'").Scan(&hold))
		return hold == "setup_failed: npm is not installed on this machine"
	})
	// x was running already and finishes; d is ready but must not launch.
	w.mark("release-x")
	w.waitTask("j1", "x", "merged")
	w.waitFor("d to be held back", func() bool { return w.hasEvent("d", "not launched: the job is held") })
	if r := w.task("j1", "d"); r.State != "ready" || w.calls("d") != 0 {
		t.Fatalf("d: %+v, %d calls", r, w.calls("d"))
	}
	w.mark("fixed-a")
	w.answer(pa.Code, "retry")
	if out := w.waitApplied(pa.Code); !strings.Contains(out, "the job's hold is lifted") {
		t.Errorf("outcome %q", out)
	}
	w.waitTask("j1", "d", "merged")
	w.waitTask("j1", "a", "merged")
	if r := w.task("j1", "b"); r.State != "stopped" {
		t.Errorf("b: %+v", r)
	}
	if st, _ := w.jobState("j1"); st != "started" {
		t.Fatalf("job %s with b stopped", st)
	}
	w.answer(pb.Code, "skip")
	w.waitJobDone("j1")
}

func TestPauseStopsLaunchesAndResumeContinues(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("first", fmt.Sprintf(`i=0
while [ ! -e %s/release-first ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.03; done
echo first > first.txt
echo '{"agentkit": {"status": "done"}}'`, w.dir))
	w.job("j1", `tasks:
  - {id: first, job_id: j1, kind: SAFE_PARALLEL}
  - {id: second, job_id: j1, kind: DEPENDENT, depends_on: [first]}
`)
	w.start()
	w.waitFor("first to start", func() bool { return w.calls("first") == 1 })
	ctx := context.Background()
	must(t, w.store.SetPaused(ctx, "shop", true, "owner", problems.Email))
	w.waitFor("the supervisor to see the pause", func() bool { return w.hasEvent("", "paused by owner (email)") })
	// The running session finishes and merges; nothing new starts.
	w.mark("release-first")
	w.waitTask("j1", "first", "merged")
	w.waitFor("second to be held back", func() bool { return w.hasEvent("second", "not launched: paused by owner") })
	if w.calls("second") != 0 {
		t.Fatal("second was launched while paused")
	}
	must(t, w.store.SetPaused(ctx, "shop", false, "owner", problems.Terminal))
	w.waitJobDone("j1")
	if w.calls("second") != 1 {
		t.Errorf("second called %d times", w.calls("second"))
	}
}

func TestMergeConflictRolledBackThenHintResolves(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	body := `if grep -q '<<<<<<<' conflict.txt 2>/dev/null; then echo resolved > conflict.txt; touch saw-markers; else echo "$AGENTKIT_TASK" > conflict.txt; fi
echo '{"agentkit": {"status": "done"}}'`
	w.script("p", body)
	w.script("q", body)
	w.job("j1", `tasks:
  - {id: p, job_id: j1, kind: SAFE_PARALLEL}
  - {id: q, job_id: j1, kind: SAFE_PARALLEL}
`)
	w.start()
	var loser string
	var pr *problems.Problem
	w.waitFor("one task to conflict", func() bool {
		for _, p := range w.openProblems() {
			loser, pr = p.Task, p
			return true
		}
		return false
	})
	winner := map[string]string{"p": "q", "q": "p"}[loser]
	won := w.waitTask("j1", winner, "merged")
	if pr.Kind != "merge_conflict" || strings.Join(verbs(pr), " ") != "retry hint skip plan" || !strings.Contains(pr.Summary, "conflict.txt") {
		t.Fatalf("problem %s %v %q", pr.Kind, pr.Replies, pr.Summary)
	}
	integ := supervisor.IntegrationDir(w.root)
	if head := w.git(w.root, "rev-parse", "agentkit/integration"); head != won.Merged {
		t.Errorf("integration at %s; the conflicting merge was not rolled back to %s", head, won.Merged)
	}
	if _, err := os.Stat(filepath.Join(w.git(integ, "rev-parse", "--absolute-git-dir"), "MERGE_HEAD")); !os.IsNotExist(err) {
		t.Errorf("a merge is still in progress in the integration work tree")
	}
	if st := w.git(integ, "status", "--porcelain"); st != "" {
		t.Errorf("integration work tree not clean: %q", st)
	}
	w.answer(pr.Code, "hint keep both sides")
	w.waitJobDone("j1")
	if body, _ := w.show("agentkit/integration", "conflict.txt"); body != "resolved\n" {
		t.Errorf("conflict.txt is %q", body)
	}
	if _, ok := w.show("agentkit/integration", "saw-markers"); !ok {
		t.Error("the builder did not see the conflict to resolve")
	}
	if w.session(loser, 2) != w.session(loser, 1) {
		t.Error("the hint did not resume the builder's session")
	}
}

func TestFullGateFailureRolledBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{workers: 1})
	w.script("bad", `echo oops > bad.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", `tasks:
  - {id: good, job_id: j1, kind: SAFE_PARALLEL}
  - {id: bad, job_id: j1, kind: DEPENDENT, depends_on: [good]}
`)
	w.start()
	p := w.problem("j1", "bad")
	good := w.task("j1", "good")
	if p.Kind != "full_gate_failed" || strings.Join(verbs(p), " ") != "retry hint skip plan" || !strings.Contains(p.LogTail, "FULL FAIL") {
		t.Fatalf("problem %s %v %q", p.Kind, p.Replies, p.LogTail)
	}
	if head := w.git(w.root, "rev-parse", "agentkit/integration"); head != good.Merged {
		t.Errorf("integration at %s; want it rolled back to %s", head, good.Merged)
	}
	if _, ok := w.show("agentkit/integration", "bad.txt"); ok {
		t.Error("bad.txt stayed on the integration branch")
	}
	if _, err := os.Stat(filepath.Join(supervisor.IntegrationDir(w.root), "bad.txt")); !os.IsNotExist(err) {
		t.Error("bad.txt stayed in the integration work tree")
	}
	w.mark("fixed-full")
	w.answer(p.Code, "retry")
	w.waitJobDone("j1")
	if _, ok := w.show("agentkit/integration", "bad.txt"); !ok {
		t.Error("the retried merge is missing")
	}
	if n := len(w.merges()); n != 2 {
		t.Errorf("%d merges; want 2", n)
	}
}
