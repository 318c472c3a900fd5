package supervisor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const threeTasks = `tasks:
  - id: store
    job_id: j1
    title: Persist entries
    kind: SAFE_PARALLEL
    expected_paths: {write: [store.txt]}
    acceptance: [Entries survive a restart.]
  - id: api
    job_id: j1
    title: Serve entries
    kind: DEPENDENT
    depends_on: [store]
  - id: cli
    job_id: j1
    title: Print entries
    kind: DEPENDENT
    depends_on: [store]
`

func TestThreeTasksMergeIntoIntegration(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	mainBefore := w.git(w.root, "rev-parse", "main")
	// The owner keeps working in their checkout while the job runs.
	w.write("README", "hello\nan edit the owner has not committed\n")
	// api checks that store's work is in its work tree: it depends on it.
	w.script("api", `test -f store.txt || { echo "store.txt missing"; exit 1; }
echo api > api.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", threeTasks)
	w.start()
	head := w.waitJobDone("j1")

	for _, name := range []string{"store", "api", "cli"} {
		if r := w.task("j1", name); r.State != "merged" || r.Merged == "" {
			t.Errorf("task %s: %+v", name, r)
		}
		if _, ok := w.show("agentkit/integration", name+".txt"); !ok {
			t.Errorf("%s.txt is not on the integration branch", name)
		}
		if _, err := os.Stat(filepath.Join(w.root, ".ai", "worktrees", name)); !os.IsNotExist(err) {
			t.Errorf("the work tree of merged task %s is still there: %v", name, err)
		}
	}
	if got := w.git(w.root, "rev-parse", "agentkit/integration"); got != head {
		t.Errorf("job head %s, integration branch at %s", head, got)
	}
	if merges := w.merges(); len(merges) != 3 || !strings.Contains(merges[2], "j1/store") {
		t.Errorf("merges: %q", merges)
	}
	// store merged before either dependent was built.
	if !strings.Contains(w.prompt("api", 1), "Your task: api: Serve entries") || !strings.Contains(w.prompt("store", 1), "Entries survive a restart.") {
		t.Errorf("briefs lack the task:\n%s", w.prompt("api", 1))
	}
	if got := w.git(w.root, "rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved: %s -> %s", mainBefore, got)
	}
	if branch := w.git(w.root, "symbolic-ref", "--short", "HEAD"); branch != "main" {
		t.Errorf("the owner's checkout is on %s", branch)
	}
	if data, _ := os.ReadFile(filepath.Join(w.root, "README")); string(data) != "hello\nan edit the owner has not committed\n" {
		t.Errorf("the owner's edit is gone: %q", data)
	}
	if st := w.git(w.root, "status", "--porcelain", "--untracked-files=no"); st != "M README" {
		t.Errorf("owner's status: %q", st)
	}
	for _, name := range []string{"store.txt", "api.txt", "cli.txt"} {
		if _, err := os.Stat(filepath.Join(w.root, name)); !os.IsNotExist(err) {
			t.Errorf("%s appeared in the owner's checkout", name)
		}
	}
	if len(w.allProblems()) != 0 {
		t.Errorf("problems: %v", w.allProblems())
	}
	var payload string
	must(t, w.db.QueryRow("SELECT payload FROM outbox WHERE kind = 'job_done'").Scan(&payload))
	if !strings.Contains(payload, `"job":"j1"`) || !strings.Contains(payload, head) {
		t.Errorf("job-done mail payload %s", payload)
	}
	if !w.hasEvent("", "done: 3 merged") {
		t.Errorf("no done event:\n%s", w.eventLog())
	}
}

const twoTasks = `tasks:
  - id: broken
    job_id: j1
    kind: SAFE_PARALLEL
  - id: sibling
    job_id: j1
    kind: SAFE_PARALLEL
`

// openProblem waits for an open problem of the task other than the given codes.
func (w *world) newProblem(job, task string, not ...string) string {
	w.t.Helper()
	var code string
	w.waitFor("a new problem for "+task, func() bool {
		for _, p := range w.openProblems() {
			if p.Task == task && !contains(not, string(p.Code)) {
				code = string(p.Code)
				return true
			}
		}
		return false
	})
	return code
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestGateFailsTwiceThenHintAndRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.mark("gate-fail-broken")
	w.job("j1", twoTasks)
	w.start()

	p := w.problem("j1", "broken")
	if p.Kind != "gate_failed" || strings.Join(verbs(p), " ") != "retry hint skip plan" {
		t.Fatalf("problem %s %v", p.Kind, p.Replies)
	}
	if !strings.Contains(p.LogTail, "FAIL: broken is broken") || !strings.Contains(p.Summary, "gate fast failed") {
		t.Errorf("problem lacks the gate output: %q / %q", p.Summary, p.LogTail)
	}
	// The one automatic retry went back to the same session with the gate output.
	if n := w.calls("broken"); n != 2 {
		t.Fatalf("builder called %d times before the problem; want 2", n)
	}
	if s1, s2 := w.session("broken", 1), w.session("broken", 2); s1 == "" || s1 != s2 {
		t.Errorf("sessions %q %q; the retry must resume the same session", s1, s2)
	}
	if pr := w.prompt("broken", 2); !strings.Contains(pr, "FAIL: broken is broken") || strings.Contains(pr, "what the owner asked for") {
		t.Errorf("the retry's prompt is not the gate output alone:\n%s", pr)
	}
	// The independent sibling merges while broken is stopped.
	w.waitTask("j1", "sibling", "merged")
	if n := len(w.allProblems()); n != 1 {
		t.Fatalf("%d problems; want exactly one", n)
	}
	if st, _ := w.jobState("j1"); st != "started" {
		t.Fatalf("job is %s with a stopped task", st)
	}

	// hint: the same builder session continues with the words.
	w.answer(p.Code, "hint use the v2 API")
	if out := w.waitApplied(p.Code); !strings.Contains(out, "continues with your hint") {
		t.Errorf("outcome %q", out)
	}
	second := w.newProblem("j1", "broken", string(p.Code))
	if n := w.calls("broken"); n != 4 {
		t.Fatalf("builder called %d times; want 4 (hint, then its automatic retry)", n)
	}
	if s := w.session("broken", 3); s != w.session("broken", 1) {
		t.Errorf("the hint reached session %q, not the task's %q", s, w.session("broken", 1))
	}
	if pr := w.prompt("broken", 3); !strings.Contains(pr, "The owner's hint: use the v2 API") {
		t.Errorf("the hint's words did not reach the builder:\n%s", pr)
	}

	// retry after fixing the cause: the gate runs again, without a session.
	runs := w.runs("broken")
	w.mark("fixed-broken")
	w.answer(problemsCode(second), "retry")
	w.waitJobDone("j1")
	if out := w.waitApplied(problemsCode(second)); out != "the task gate runs again" {
		t.Errorf("outcome %q", out)
	}
	if n := w.calls("broken"); n != 4 {
		t.Errorf("retry started a session (%d calls)", n)
	}
	if w.runs("broken") != runs+1 {
		t.Errorf("gate runs %d -> %d; retry must run the gate once more", runs, w.runs("broken"))
	}
	if r := w.task("j1", "broken"); r.State != "merged" {
		t.Errorf("broken: %+v", r)
	}
	if open := w.openProblems(); len(open) != 0 {
		t.Errorf("open problems: %v", open)
	}
}

// A gate that fails for a cause outside the builder's work: shown the
// failure, the builder changes nothing. That is no "unchanged" problem: the
// gate runs again, the problem is gate_failed, and retry after the owner
// fixed the cause re-runs the gate and merges.
func TestGateFailsForAnOutsideCause(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.mark("gate-fail-broken")
	// The builder writes the same file on every call.
	w.script("broken", `echo "broken work" > broken.txt; echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", twoTasks)
	w.start()

	p := w.problem("j1", "broken")
	if p.Kind != "gate_failed" || strings.Join(verbs(p), " ") != "retry hint skip plan" {
		t.Fatalf("problem %s %v; want gate_failed offering retry hint skip plan", p.Kind, p.Replies)
	}
	if n := w.calls("broken"); n != 2 {
		t.Fatalf("builder called %d times; want 2 (the build and the automatic retry)", n)
	}
	runs := w.runs("broken")
	if runs != 2 {
		t.Fatalf("gate ran %d times before the problem; want 2", runs)
	}
	w.mark("fixed-broken")
	w.answer(p.Code, "retry")
	w.waitJobDone("j1")
	if n := w.calls("broken"); n != 2 {
		t.Errorf("retry started a session (%d calls)", n)
	}
	if r := w.task("j1", "broken"); r.State != "merged" {
		t.Errorf("broken: %+v", r)
	}
	if n := len(w.allProblems()); n != 1 {
		t.Errorf("%d problems; want the one", n)
	}
}

// A builder whose session changes no file at all is an unchanged
// resubmission: a problem at once, no automatic retry.
func TestBuilderChangingNothingIsUnchanged(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("broken", `echo "nothing to do here"; echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", twoTasks)
	w.start()

	p := w.problem("j1", "broken")
	if p.Kind != "unchanged" || strings.Join(verbs(p), " ") != "retry hint skip plan" {
		t.Fatalf("problem %s %v; want unchanged offering retry hint skip plan", p.Kind, p.Replies)
	}
	if n := w.calls("broken"); n != 1 {
		t.Fatalf("builder called %d times; an unchanged resubmission is not retried automatically", n)
	}
	if n := w.runs("broken"); n != 0 {
		t.Fatalf("the gate ran %d times on no change", n)
	}
	w.waitTask("j1", "sibling", "merged")
}
