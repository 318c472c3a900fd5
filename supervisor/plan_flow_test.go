package supervisor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/supervisor"
)

func TestCoordinatorPlansAndInvalidPlanTakesAHint(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	// Another job's task in tasks.yaml must survive the coordinator's plan.
	w.write(".ai/tasks.yaml", "tasks:\n  - {id: elsewhere, job_id: other, kind: TEST_ONLY}\n")
	w.script("coordinator", "if [ \"$1\" = 1 ]; then\ncat <<'PLAN'\nHere is my plan.\n```yaml\ntasks:\n  - {id: a, title: First, kind: SAFE_PARALLEL}\n  - {id: b, title: Second, kind: DEPENDENT, depends_on: [nope]}\n```\nPLAN\nelse\ncat <<'PLAN'\nFixed.\n```yaml\ntasks:\n  - {id: a, title: First, kind: SAFE_PARALLEL}\n  - {id: b, title: Second, kind: DEPENDENT, depends_on: [a]}\n```\nPLAN\nfi\n")
	w.job("j1", "")
	w.start()
	p := w.problem("j1", "")
	if p.Kind != "invalid_plan" || strings.Join(verbs(p), " ") != "retry hint plan" {
		t.Fatalf("problem %s %v", p.Kind, p.Replies)
	}
	if !strings.Contains(p.Summary, `task "b": depends_on: unknown task "nope"`) {
		t.Errorf("the problem does not name the task and field: %q", p.Summary)
	}
	brief := w.prompt("coordinator", 1)
	for _, want := range []string{"Make the shop better.", "README", "fast: sh ", "```yaml", "job_id: j1"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the planning brief lacks %q:\n%s", want, brief)
		}
	}
	w.answer(p.Code, "hint b depends on a")
	w.waitJobDone("j1")
	if w.session("coordinator", 2) != w.session("coordinator", 1) || !strings.Contains(w.prompt("coordinator", 2), "The owner's hint: b depends on a") {
		t.Errorf("the hint did not reach the coordinator's session:\n%s", w.prompt("coordinator", 2))
	}
	data, err := os.ReadFile(supervisor.TasksPath(w.root))
	must(t, err)
	plan, err := supervisor.ParsePlan("tasks.yaml", data)
	must(t, err)
	var ids []string
	for _, task := range plan.Tasks {
		ids = append(ids, task.JobID+"/"+task.ID)
	}
	if strings.Join(ids, " ") != "other/elsewhere j1/a j1/b" {
		t.Errorf("tasks.yaml holds %v", ids)
	}
	if w.task("j1", "b").State != "merged" {
		t.Error("b did not merge")
	}
}

func TestJobUpdateReplansAndHoldsMerges(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("coordinator", fmt.Sprintf("if [ \"$1\" = 1 ]; then\nprintf '```yaml\\n- {id: one, kind: SAFE_PARALLEL}\\n```\\n'\nelse\ni=0; while [ ! -e %s/release-plan ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.03; done\nprintf '```yaml\\n- {id: one, kind: SAFE_PARALLEL}\\n- {id: two, kind: DEPENDENT, depends_on: [one]}\\n```\\n'\nfi\n", w.dir))
	w.script("one", fmt.Sprintf(`i=0
while [ ! -e %s/release-one ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.03; done
echo one > one.txt
echo '{"agentkit": {"status": "done"}}'`, w.dir))
	w.job("j1", "")
	w.start()
	w.waitFor("one to start", func() bool { return w.calls("one") == 1 })
	jf, err := supervisor.UpdateJob(context.Background(), w.db, w.repo, "j1", "Also add two.", time.Now())
	must(t, err)
	if jf.Revision() != 2 || jf.Revisions[0].Request != "Make the shop better.\n\nAcceptance:\n- it works\n" {
		t.Fatalf("job file: %+v", jf)
	}
	w.waitFor("the re-plan to start", func() bool { return w.calls("coordinator") == 2 })
	w.mark("release-one")
	w.waitFor("one's merge to wait for the re-plan", func() bool { return w.hasEvent("one", "merge waits: the job waits for its re-plan") })
	if r := w.task("j1", "one"); r.State != "ready" || r.Step != "merge" {
		t.Fatalf("one: %+v", r)
	}
	if !strings.Contains(w.prompt("coordinator", 2), "Also add two.") || !strings.Contains(w.prompt("coordinator", 2), "- one (building)") {
		t.Errorf("the re-plan brief lacks the correction or the current tasks:\n%s", w.prompt("coordinator", 2))
	}
	w.mark("release-plan")
	w.waitJobDone("j1")
	if w.calls("one") != 1 || w.calls("two") != 1 {
		t.Errorf("calls: one %d two %d", w.calls("one"), w.calls("two"))
	}
	if len(w.merges()) != 2 {
		t.Errorf("merges %q", w.merges())
	}
}

func TestCancelStopsSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("slow", `i=0
while [ $i -lt 3000 ]; do i=$((i+1)); sleep 0.03; done`)
	w.job("j1", "tasks:\n  - {id: slow, job_id: j1, kind: SAFE_PARALLEL}\n  - {id: later, job_id: j1, kind: DEPENDENT, depends_on: [slow]}\n")
	w.start()
	w.waitFor("slow to start", func() bool { return w.calls("slow") == 1 })
	pid := readPid(t, filepath.Join(w.dir, "calls", "slow.1.pid"))
	must(t, supervisor.CancelJob(context.Background(), w.db, w.repo, "j1", time.Now()))
	w.waitTask("j1", "slow", "cancelled")
	w.waitTask("j1", "later", "cancelled")
	w.waitFor("the builder to be gone", func() bool { return !alive(pid) })
	if st, _ := w.jobState("j1"); st != "cancelled" {
		t.Errorf("job %s", st)
	}
	if err := supervisor.CancelJob(context.Background(), w.db, w.repo, "j1", time.Now()); err == nil || !strings.Contains(err.Error(), "already cancelled") {
		t.Errorf("second cancel: %v", err)
	}
	res, err := supervisor.CleanJob(context.Background(), w.db, w.repo, "j1")
	must(t, err)
	if len(res.Worktrees) != 1 || len(res.Branches) != 1 || res.Branches[0] != "agentkit/j1/slow" {
		t.Errorf("clean: %+v", res)
	}
	if _, err := os.Stat(supervisor.TaskDir(w.root, "slow")); !os.IsNotExist(err) {
		t.Error("the work tree is still there")
	}
}

func TestStopAndRestartContinuesTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("long", `if [ "$1" = 1 ]; then i=0; while [ $i -lt 3000 ]; do i=$((i+1)); sleep 0.03; done; exit 9; fi
cat > long.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", "tasks:\n  - {id: long, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	w.waitFor("long to start", func() bool { return w.calls("long") == 1 })
	pid := readPid(t, filepath.Join(w.dir, "calls", "long.1.pid"))
	w.stop()
	if alive(pid) {
		t.Error("a clean stop left the builder running")
	}
	if r := w.task("j1", "long"); r.State != "ready" || r.Step != "build" || r.Retried != "" {
		t.Fatalf("after a clean stop: %+v", r)
	}
	w.start()
	w.waitJobDone("j1")
	if w.session("long", 2) != w.session("long", 1) {
		t.Error("the restart did not continue the session")
	}
	if body, _ := w.show("agentkit/integration", "long.txt"); !strings.Contains(body, "interrupted because agentkit stopped") {
		t.Errorf("the builder was not told why: %q", body)
	}
	var interrupted int
	must(t, w.db.QueryRow("SELECT count(*) FROM attempts WHERE outcome LIKE 'interrupted%' AND counted = 0").Scan(&interrupted))
	if interrupted != 1 {
		t.Errorf("%d interrupted attempts not counted; want 1", interrupted)
	}
}

func TestOneSupervisorPerRepository(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("long", `i=0; while [ $i -lt 3000 ]; do i=$((i+1)); sleep 0.03; done`)
	w.job("j1", "tasks:\n  - {id: long, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	w.waitFor("long to start", func() bool { return w.calls("long") == 1 })
	second, err := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo})
	must(t, err)
	err = second.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "another supervisor runs for this repository") {
		t.Fatalf("second supervisor: %v", err)
	}
}

func TestPlanReplyReplansWithTheWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("coordinator", "if [ \"$1\" = 1 ]; then\nprintf '```yaml\\n- {id: narrow, kind: SAFE_PARALLEL, expected_paths: {write: [a.txt]}}\\n```\\n'\nelse\nprintf '```yaml\\n- {id: narrow, kind: SAFE_PARALLEL, expected_paths: {write: [a.txt, router.go]}}\\n```\\n'\nfi\n")
	w.script("narrow", `if grep -q "router.go" ; then echo wide > narrow.txt; echo '{"agentkit": {"status": "done"}}'; exit 0; fi
echo '{"agentkit": {"status": "needs_files", "reason": "routes live in router.go", "paths": ["router.go"]}}'`)
	w.job("j1", "")
	w.start()
	p := w.problem("j1", "narrow")
	w.answer(p.Code, "plan let narrow change router.go too")
	w.waitJobDone("j1")
	if out := w.waitApplied(p.Code); out != "the job is re-planned with your words" {
		t.Errorf("outcome %q", out)
	}
	if pr := w.prompt("coordinator", 2); !strings.Contains(pr, "let narrow change router.go too") {
		t.Errorf("the re-plan brief lacks the words:\n%s", pr)
	}
	if w.session("narrow", 2) == w.session("narrow", 1) {
		t.Error("the re-planned task continued its old session; it starts afresh")
	}
	jf, err := supervisor.LoadJobFile(w.root, "j1")
	must(t, err)
	if len(jf.Decisions) != 1 || jf.Decisions[0].Words != "let narrow change router.go too" || jf.Decisions[0].Who != "owner" {
		t.Errorf("job file decisions: %+v", jf.Decisions)
	}
	if body, _ := w.show("agentkit/integration", "narrow.txt"); body != "wide\n" {
		t.Errorf("narrow.txt %q", body)
	}
}

func TestResearchTaskRunsReadOnlyAndFeedsDependents(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("survey", `[ "$AGENTKIT_ROLE" = readonly ] || { echo "not read-only: $AGENTKIT_ROLE"; exit 1; }
echo "Queries are parsed in internal/query/parse.go."
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", `tasks:
  - {id: survey, job_id: j1, kind: RESEARCH}
  - {id: parser, job_id: j1, kind: DEPENDENT, depends_on: [survey]}
`)
	w.start()
	w.waitJobDone("j1")
	if pr := w.prompt("parser", 1); !strings.Contains(pr, "# The result of task survey") || !strings.Contains(pr, "internal/query/parse.go") {
		t.Errorf("the dependent was not given the research:\n%s", pr)
	}
	if !strings.Contains(w.prompt("survey", 1), "This is a research task") {
		t.Error("the research brief does not say so")
	}
	if merges := w.merges(); len(merges) != 1 || !strings.Contains(merges[0], "j1/parser") {
		t.Errorf("merges: %q", merges)
	}
	if w.git(w.root, "branch", "--list", "agentkit/j1/survey") != "" {
		t.Error("the research task got a branch")
	}
}

func TestGatesAndProblemsSeeNoSecrets(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{env: []string{"SHOP_API_TOKEN=hunter2-very-secret-value"}})
	w.mark("gate-fail-leak")
	w.file(filepath.Join(w.dir, "gate.sh"), 0o644, fmt.Sprintf(`S=%s
echo "token=[$SHOP_API_TOKEN]"
t=$(basename "$PWD")
if [ -e "$S/gate-fail-$t" ]; then exit 1; fi
`, w.dir))
	w.script("leak", `echo "call $1: the token is $SHOP_API_TOKEN" > leak.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", "tasks:\n  - {id: leak, job_id: j1, kind: SAFE_PARALLEL}\n")
	w.start()
	p := w.problem("j1", "leak")
	if !strings.Contains(p.LogTail, "token=[]") || strings.Contains(p.LogTail, "hunter2") {
		t.Errorf("the gate saw the secret: %q", p.LogTail)
	}
	if body, _ := os.ReadFile(filepath.Join(supervisor.TaskDir(w.root, "leak"), "leak.txt")); strings.Contains(string(body), "hunter2") || len(body) == 0 {
		t.Errorf("the builder saw the secret: %q", body)
	}
}
