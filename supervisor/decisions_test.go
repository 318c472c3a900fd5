package supervisor_test

import (
	"strings"
	"testing"
)

func TestSkipCancelsDependents(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("wide", `echo "I need to change the router too"
echo '{"agentkit": {"status": "needs_files", "reason": "the route table lives in router.go", "paths": ["router.go"]}}'`)
	w.job("j1", `tasks:
  - {id: wide, job_id: j1, kind: SAFE_PARALLEL, expected_paths: {write: [wide.txt]}}
  - {id: child, job_id: j1, kind: DEPENDENT, depends_on: [wide]}
  - {id: grandchild, job_id: j1, kind: DEPENDENT, depends_on: [child]}
  - {id: other, job_id: j1, kind: SAFE_PARALLEL}
`)
	w.start()
	p := w.problem("j1", "wide")
	if p.Kind != "scope_request" || strings.Join(verbs(p), " ") != "dismiss plan skip" || !strings.Contains(p.Summary, "router.go") {
		t.Fatalf("problem: %s %v %q", p.Kind, p.Replies, p.Summary)
	}
	w.waitTask("j1", "other", "merged")
	if r := w.task("j1", "child"); r.State != "pending" {
		t.Fatalf("child: %+v", r)
	}
	w.answer(p.Code, "skip")
	head := w.waitJobDone("j1")
	if out := w.waitApplied(p.Code); !strings.Contains(out, "cancelled the tasks that depend on it: child, grandchild") {
		t.Errorf("outcome %q", out)
	}
	want := map[string]string{"wide": "skipped", "child": "cancelled", "grandchild": "cancelled", "other": "merged"}
	for name, st := range want {
		if r := w.task("j1", name); r.State != st {
			t.Errorf("%s is %s; want %s", name, r.State, st)
		}
	}
	if w.calls("child") != 0 || w.calls("grandchild") != 0 {
		t.Error("a cancelled task was built")
	}
	if head != w.git(w.root, "rev-parse", "agentkit/integration") || len(w.merges()) != 1 {
		t.Errorf("head %s, merges %q", head, w.merges())
	}
}

func TestDismissKeepsScope(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("wide", `if [ "$1" = 1 ]; then
  echo '{"agentkit": {"status": "needs_files", "reason": "want more", "paths": ["x.go"]}}'
  exit 0
fi
cat > dismissed.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", "tasks:\n  - {id: wide, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	p := w.problem("j1", "wide")
	w.answer(p.Code, "dismiss")
	w.waitJobDone("j1")
	body, ok := w.show("agentkit/integration", "dismissed.txt")
	if !ok || !strings.Contains(body, "declined your request for more files") {
		t.Errorf("the builder was not told: %q", body)
	}
	if w.session("wide", 2) != w.session("wide", 1) {
		t.Error("dismiss did not continue the same session")
	}
}

func TestReviewFindingsThreeRoundsThenAccept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{review: "ai"})
	w.script("review-polish", `echo "Looks rough."
echo '{"agentkit": {"verdict": "changes", "findings": ["name the variable better", "add a test"]}}'`)
	w.job("j1", "tasks:\n  - {id: polish, job_id: j1, kind: SAFE_PARALLEL, title: Polish it}\n")
	w.start()
	p := w.problem("j1", "polish")
	if p.Kind != "review_exhausted" || strings.Join(verbs(p), " ") != "retry accept hint skip plan" {
		t.Fatalf("problem %s %v", p.Kind, p.Replies)
	}
	if n := w.calls("review-polish"); n != 4 {
		t.Errorf("reviewer called %d times; want 4 (three rounds go back, the fourth stops)", n)
	}
	if n := w.calls("polish"); n != 4 {
		t.Errorf("builder called %d times; want 4", n)
	}
	for n := 2; n <= 4; n++ {
		if pr := w.prompt("polish", n); !strings.Contains(pr, "name the variable better") || w.session("polish", n) != w.session("polish", 1) {
			t.Errorf("round %d did not reach the same session with the findings:\n%s", n-1, pr)
		}
	}
	if !strings.Contains(w.prompt("review-polish", 1), "+polish 1") {
		t.Errorf("the reviewer was not shown the diff:\n%s", w.prompt("review-polish", 1))
	}
	if r := w.task("j1", "polish"); r.ReviewRounds != 3 {
		t.Errorf("review rounds %d", r.ReviewRounds)
	}
	runs := w.runs("polish")
	w.answer(p.Code, "accept")
	w.waitJobDone("j1")
	if w.runs("polish") != runs+1 {
		t.Errorf("accept merged without running the gate again (%d -> %d)", runs, w.runs("polish"))
	}
	if w.calls("review-polish") != 4 || w.calls("polish") != 4 {
		t.Error("accept started another session")
	}
	if body, _ := w.show("agentkit/integration", "polish.txt"); body != "polish 4\n" {
		t.Errorf("merged %q; want the reviewed commit", body)
	}
}

func TestHumanReviewAccept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{review: "human"})
	w.job("j1", "tasks:\n  - {id: ui, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	p := w.problem("j1", "ui")
	if p.Kind != "human_review" || strings.Join(verbs(p), " ") != "accept retry hint skip" || !strings.Contains(p.Detail, "git -C") {
		t.Fatalf("problem %s %v %q", p.Kind, p.Replies, p.Detail)
	}
	w.answer(p.Code, "accept")
	w.waitJobDone("j1")
	if r := w.task("j1", "ui"); r.State != "merged" {
		t.Errorf("%+v", r)
	}
}

func TestCrashRetriedOnceAuthNotAtAll(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("crashy", `echo "panic: runtime error: index out of range"; exit 2`)
	w.script("locked", `echo "Error: not logged in. Please run /login"; exit 1`)
	w.job("j1", `tasks:
  - {id: crashy, job_id: j1, kind: SAFE_PARALLEL}
  - {id: locked, job_id: j1, kind: SAFE_PARALLEL}
`)
	w.start()
	crash := w.problem("j1", "crashy")
	auth := w.problem("j1", "locked")
	if crash.Kind != "crashed" || strings.Join(verbs(crash), " ") != "retry hint skip plan" || !strings.Contains(crash.Summary, "index out of range") {
		t.Errorf("crash problem %s %v %q", crash.Kind, crash.Replies, crash.Summary)
	}
	if w.calls("crashy") != 2 || w.session("crashy", 2) != w.session("crashy", 1) {
		t.Errorf("crash: %d calls; want the one automatic retry in the same session", w.calls("crashy"))
	}
	if auth.Kind != "auth_required" || strings.Join(verbs(auth), " ") != "retry skip" || w.calls("locked") != 1 {
		t.Errorf("auth problem %s %v after %d calls", auth.Kind, auth.Replies, w.calls("locked"))
	}
	// One auth failure alone does not hold the job.
	var hold string
	must(t, w.db.QueryRow("SELECT hold FROM jobs WHERE name = 'j1'").Scan(&hold))
	if hold != "" {
		t.Errorf("held by %q", hold)
	}
}
