package supervisor_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/supervisor"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentkit-sup-git-")
	if err != nil {
		panic(err)
	}
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Owner\n\temail = owner@example.test\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		panic(err)
	}
	// Every test's git (and the supervisor's) uses this identity; no test changes it.
	os.Setenv("GIT_CONFIG_GLOBAL", cfg)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitLimit bounds every wait on a condition; generous for a slow machine.
const waitLimit = 90 * time.Second

// world is one owner's repository with a scripted agent, a store and a supervisor.
type world struct {
	t       testing.TB
	root    string // the owner's checkout
	dir     string // scripts, call logs and gate markers, outside the repository
	db      *state.DB
	store   *problems.Store
	repo    repos.Repo
	clock   supervisor.Clock
	factory supervisor.Factory
	env     []string

	mu     sync.Mutex
	events []supervisor.Event
	cancel context.CancelFunc
	done   chan error
}

// worldOpts shape project.yaml.
type worldOpts struct {
	review  string // workflow.review; off when empty
	workers int    // max_workers; 2 when zero
	extra   string // more project.yaml
	clock   supervisor.Clock
	// factory replaces the runtimes (default: the real command runtime).
	factory supervisor.Factory
	// env is added to the supervisor's environment.
	env []string
}

func newWorld(t testing.TB, o worldOpts) *world {
	t.Helper()
	w := &world{t: t, root: filepath.Join(t.TempDir(), "shop"), dir: t.TempDir(), clock: o.clock, factory: o.factory, env: o.env}
	must(t, os.MkdirAll(w.root, 0o755))
	w.git(w.root, "init", "-q", "-b", "main")
	w.write("README", "hello\n")
	w.git(w.root, "add", "README")
	w.git(w.root, "commit", "-q", "-m", "first")
	for _, d := range []string{"scripts", "calls"} {
		must(t, os.MkdirAll(filepath.Join(w.dir, d), 0o755))
	}
	w.file(filepath.Join(w.dir, "agent.sh"), 0o755, fmt.Sprintf(agentScript, w.dir))
	w.file(filepath.Join(w.dir, "gate.sh"), 0o644, fmt.Sprintf(gateScript, w.dir))
	w.file(filepath.Join(w.dir, "full.sh"), 0o644, fmt.Sprintf(fullScript, w.dir))
	if o.review == "" {
		o.review = "off"
	}
	if o.workers == 0 {
		o.workers = 2
	}
	w.write(".ai/project.yaml", fmt.Sprintf(`workflow: {mode: feature, review: %s}
gates:
  fast: ["sh %s/gate.sh"]
  full: ["sh %s/full.sh"]
max_workers: %d
runtimes:
  default: command
  reviewer: command
  coordinator: command
  command: {argv: ["%s/agent.sh"]}
  grace: 1s
integration_branch: agentkit/integration
%s`, o.review, w.dir, w.dir, o.workers, w.dir, o.extra))
	db, err := state.Open(context.Background(), filepath.Join(w.dir, "state.db"))
	must(t, err)
	t.Cleanup(func() { db.Close() })
	w.db, w.store = db, problems.NewStore(db)
	w.repo, _, err = repos.Register(context.Background(), db, "shop", w.root, time.Now())
	must(t, err)
	return w
}

// agentScript is the command runtime's program: it logs each call (prompt,
// session, role) and runs the test's script for the task, the reviewer, the
// coordinator or the final review, or a default that does the work.
const agentScript = `#!/bin/sh
S=%s
key="${AGENTKIT_TASK:-coordinator}"
prompt=$(cat)
if [ "$AGENTKIT_ROLE" = "readonly" ]; then
  case "$prompt" in
    "You are a code reviewer"*)
      if [ -n "$AGENTKIT_TASK" ]; then key="review-$AGENTKIT_TASK"; else key="final-review"; fi;;
  esac
fi
n=$(( $(cat "$S/calls/$key.count" 2>/dev/null || echo 0) + 1 ))
printf '%%s' "$prompt" > "$S/calls/$key.$n.prompt"
echo "$AGENTKIT_SESSION" > "$S/calls/$key.$n.session"
echo $$ > "$S/calls/$key.$n.pid"
echo $n > "$S/calls/$key.count"
if [ -f "$S/scripts/$key.sh" ]; then
  printf '%%s' "$prompt" | sh "$S/scripts/$key.sh" "$n"
  exit $?
fi
case "$key" in
  review-*|final-review) echo '{"agentkit": {"verdict": "pass"}}';;
  coordinator) echo "no script for the coordinator"; exit 3;;
  *) echo "$key $n" > "$key.txt"; echo "did $key"; echo '{"agentkit": {"status": "done"}}';;
esac
`

// gateScript is the fast gate: it fails for a task with a gate-fail-<task>
// marker until a fixed-<task> marker exists.
const gateScript = `S=%s
t=$(basename "$PWD")
echo run >> "$S/gate-$t.runs"
if [ -e "$S/gate-fail-$t" ] && [ ! -e "$S/fixed-$t" ]; then echo "FAIL: $t is broken"; exit 1; fi
echo "ok $t"
`

// fullScript is the full gate: a bad.txt on the merge fails it until fixed-full exists.
const fullScript = `S=%s
echo run >> "$S/full.runs"
if [ -e bad.txt ] && [ ! -e "$S/fixed-full" ]; then echo "FULL FAIL: bad.txt is on the integration branch"; exit 1; fi
echo "full ok"
`

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// file writes a file with a mode.
func (w *world) file(path string, mode os.FileMode, content string) {
	w.t.Helper()
	must(w.t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(w.t, os.WriteFile(path, []byte(content), mode))
}

// write writes a file of the owner's checkout.
func (w *world) write(rel, content string) { w.file(filepath.Join(w.root, rel), 0o644, content) }

// script sets what the agent does for key (a task, review-<task>,
// coordinator, final-review); $1 is the call's number, stdin the prompt.
func (w *world) script(key, body string) {
	w.file(filepath.Join(w.dir, "scripts", key+".sh"), 0o644, body)
}

// mark creates a marker file in the world's folder.
func (w *world) mark(name string) { w.file(filepath.Join(w.dir, name), 0o644, "x\n") }

func (w *world) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// job creates a job with the tasks.yaml content (may be empty) and starts it.
func (w *world) job(name, tasks string) {
	w.t.Helper()
	ctx := context.Background()
	if tasks != "" {
		w.write(".ai/tasks.yaml", tasks)
	}
	_, err := supervisor.CreateJob(ctx, w.db, w.repo, name, "Make the shop better.\n\nAcceptance:\n- it works\n", time.Now())
	must(w.t, err)
	_, err = supervisor.StartJobs(ctx, w.db, w.repo, name, 0, time.Now())
	must(w.t, err)
}

// start runs a supervisor until the test ends or stop is called.
func (w *world) start() {
	w.t.Helper()
	sup, err := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo, Clock: w.clock, Runtimes: w.factory, Env: append(os.Environ(), w.env...), Poll: 100 * time.Millisecond,
		OnEvent: func(e supervisor.Event) {
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
		}})
	must(w.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan error, 1)
	go func() { w.done <- sup.Run(ctx) }()
	w.t.Cleanup(w.stop)
}

// stop ends the supervisor and waits for it.
func (w *world) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	select {
	case err := <-w.done:
		if err != nil {
			w.t.Errorf("supervisor: %v", err)
		}
	case <-time.After(waitLimit):
		w.t.Error("the supervisor did not stop")
	}
	w.cancel = nil
}

// waitFor polls cond until it holds, failing the test after waitLimit.
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s\nevents:\n%s", what, w.eventLog())
		}
		select {
		case err := <-w.done:
			w.t.Fatalf("the supervisor ended (%v) while waiting for %s\nevents:\n%s", err, what, w.eventLog())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *world) eventLog() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, e := range w.events {
		fmt.Fprintf(&b, "  %s/%s %s: %s\n", e.Job, e.Task, e.Kind, e.Message)
	}
	return b.String()
}

// hasEvent reports whether an event of the task holds text.
func (w *world) hasEvent(task, text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.Task == task && strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// taskRow is a task as the store has it.
type taskRow struct {
	State, Step, Session, Retried, Head, Merged string
	ReviewRounds                                int
}

func (w *world) task(job, name string) taskRow {
	w.t.Helper()
	var r taskRow
	err := w.db.QueryRow(`SELECT t.state, t.step, t.session, t.retried, t.head, t.merged, t.review_rounds FROM tasks t JOIN jobs j ON j.id = t.job_id
		WHERE j.repo = 'shop' AND j.name = ? AND t.name = ?`, job, name).Scan(&r.State, &r.Step, &r.Session, &r.Retried, &r.Head, &r.Merged, &r.ReviewRounds)
	if errors.Is(err, sql.ErrNoRows) {
		return taskRow{}
	}
	must(w.t, err)
	return r
}

func (w *world) waitTask(job, name, state string) taskRow {
	w.t.Helper()
	var r taskRow
	w.waitFor(fmt.Sprintf("task %s to be %s", name, state), func() bool {
		r = w.task(job, name)
		return r.State == state
	})
	return r
}

func (w *world) jobState(name string) (st, head string) {
	w.t.Helper()
	must(w.t, w.db.QueryRow("SELECT state, head FROM jobs WHERE repo = 'shop' AND name = ?", name).Scan(&st, &head))
	return st, head
}

func (w *world) waitJobDone(name string) string {
	w.t.Helper()
	var head string
	w.waitFor("job "+name+" to be done", func() bool {
		var st string
		st, head = w.jobState(name)
		return st == "done"
	})
	return head
}

// problem waits for the task's open problem.
func (w *world) problem(job, task string) *problems.Problem {
	w.t.Helper()
	var found *problems.Problem
	w.waitFor("a problem for "+task, func() bool {
		list, err := w.store.List(context.Background(), problems.Filter{Repo: "shop", Job: job, WithLog: true})
		must(w.t, err)
		for _, p := range list {
			if p.Task == task {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

func (w *world) openProblems() []*problems.Problem {
	w.t.Helper()
	list, err := w.store.List(context.Background(), problems.Filter{Repo: "shop"})
	must(w.t, err)
	return list
}

func (w *world) allProblems() []*problems.Problem {
	w.t.Helper()
	list, err := w.store.List(context.Background(), problems.Filter{Repo: "shop", All: true})
	must(w.t, err)
	return list
}

// answer records a decision as the owner at the terminal would.
func (w *world) answer(code problems.Code, reply string) {
	w.t.Helper()
	r, err := problems.ParseReply(reply)
	must(w.t, err)
	_, err = w.store.Answer(context.Background(), code, problems.Answer{Reply: r, Channel: problems.Terminal, Who: "owner"})
	must(w.t, err)
}

// waitApplied waits until the decision on code is applied and returns its outcome.
func (w *world) waitApplied(code problems.Code) string {
	w.t.Helper()
	var out string
	w.waitFor("the decision on "+string(code)+" to be applied", func() bool {
		p, err := w.store.Get(context.Background(), code)
		must(w.t, err)
		if p.Decision != nil && p.Decision.Applied() {
			out = p.Decision.Outcome
			return true
		}
		return false
	})
	return out
}

// calls says how many times the agent was called for key.
func (w *world) calls(key string) int {
	data, err := os.ReadFile(filepath.Join(w.dir, "calls", key+".count"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func (w *world) prompt(key string, n int) string {
	data, _ := os.ReadFile(filepath.Join(w.dir, "calls", fmt.Sprintf("%s.%d.prompt", key, n)))
	return string(data)
}

func (w *world) session(key string, n int) string {
	data, _ := os.ReadFile(filepath.Join(w.dir, "calls", fmt.Sprintf("%s.%d.session", key, n)))
	return strings.TrimSpace(string(data))
}

// runs counts the fast gate's runs in the task's work tree.
func (w *world) runs(name string) int {
	data, _ := os.ReadFile(filepath.Join(w.dir, "gate-"+name+".runs"))
	return strings.Count(string(data), "run")
}

// integ runs git in the owner's repository against the integration branch.
func (w *world) show(rev, path string) (string, bool) {
	cmd := exec.Command("git", "show", rev+":"+path)
	cmd.Dir = w.root
	out, err := cmd.Output()
	return string(out), err == nil
}

// merges lists the first-parent merge subjects of the integration branch.
func (w *world) merges() []string {
	out := w.git(w.root, "log", "--first-parent", "--merges", "--format=%s", "agentkit/integration")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func verbs(p *problems.Problem) []string {
	out := make([]string, len(p.Replies))
	for i, v := range p.Replies {
		out[i] = string(v)
	}
	return out
}

func problemsCode(s string) problems.Code { return problems.Code(s) }

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	must(t, err)
	return pid
}
