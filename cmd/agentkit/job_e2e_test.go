//go:build linux

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a buffer a child process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startBinary starts agentkit in dir without waiting for it.
func (e *env) startBinary(dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		}
	})
	return cmd, out
}

// waitExit waits for a started agentkit to end and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, out *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(120 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("agentkit did not finish:\n%s", out.String())
		return -1
	}
}

func waitUntil(t *testing.T, what string, out *syncBuffer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; agentkit printed:\n%s", what, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// scriptedProject writes a project.yaml whose runtime is a shell script that
// runs scripts/<task>.sh (or does the task's work), and gates that obey markers.
func scriptedProject(t *testing.T, dir, state string) {
	t.Helper()
	files := map[string]string{
		"agent.sh": `#!/bin/sh
S=` + state + `
key="${AGENTKIT_TASK:-coordinator}"
n=$(( $(cat "$S/$key.count" 2>/dev/null || echo 0) + 1 ))
cat > "$S/$key.$n.prompt"
echo "$AGENTKIT_SESSION" > "$S/$key.$n.session"
echo $$ > "$S/$key.$n.pid"
echo $n > "$S/$key.count"
if [ -f "$S/$key.sh" ]; then exec sh "$S/$key.sh" "$n"; fi
echo "$key $n" > "$key.txt"
echo '{"agentkit": {"status": "done"}}'
`,
		"full.sh": `S=` + state + `
if [ -e t2.txt ] && [ ! -e "$S/release-full" ]; then
  touch "$S/full-blocked"
  i=0; while [ ! -e "$S/release-full" ] && [ $i -lt 3000 ]; do i=$((i+1)); sleep 0.03; done
fi
echo full ok
`,
		// t1 hangs on its first call (until it is killed) and works on the next.
		"t1.sh": `if [ "$1" = 1 ]; then i=0; while [ $i -lt 4000 ]; do i=$((i+1)); sleep 0.03; done; exit 9; fi
echo "t1 recovered" > t1.txt
echo '{"agentkit": {"status": "done"}}'
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(state, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	project := fmt.Sprintf(`workflow: {mode: feature, review: off}
gates:
  fast: ["true"]
  full: ["sh %s/full.sh"]
max_workers: 2
runtimes:
  default: command
  command: {argv: ["%s/agent.sh"]}
  grace: 1s
integration_branch: agentkit/integration
`, state, state)
	if err := os.WriteFile(filepath.Join(dir, ".ai", "project.yaml"), []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestJobSurvivesSIGKILL(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	e.mustRun(dir, "init")
	state := t.TempDir()
	scriptedProject(t, dir, state)
	os.WriteFile(filepath.Join(dir, ".ai", "tasks.yaml"), []byte(`tasks:
  - {id: t0, job_id: j1, kind: SAFE_PARALLEL}
  - {id: t1, job_id: j1, kind: SAFE_PARALLEL}
  - {id: t2, job_id: j1, kind: DEPENDENT, depends_on: [t0]}
`), 0o644)
	req := filepath.Join(t.TempDir(), "request.md")
	os.WriteFile(req, []byte("Three small things.\n"), 0o644)
	e.mustRun(dir, "job", "create", "j1", "--request-file", req)

	first, out := e.startBinary(dir, "job", "start", "j1", "--foreground")
	// t1's builder hangs; t2's merge is made and its full gate blocks.
	waitUntil(t, "t1 to run and t2's full gate to block", out, func() bool {
		return exists(filepath.Join(state, "t1.1.pid")) && exists(filepath.Join(state, "full-blocked"))
	})
	var st struct {
		Tasks []struct {
			Name, State string
			Attempts    int
		}
	}
	statusOf := func() {
		var jobs []json.RawMessage
		if err := json.Unmarshal([]byte(e.mustRun(dir, "job", "status", "j1", "--json")), &jobs); err != nil || len(jobs) != 1 {
			t.Fatalf("job status: %v", err)
		}
		json.Unmarshal(jobs[0], &st)
	}
	statusOf()
	if fmt.Sprint(st.Tasks) != "[{t0 merged 1} {t1 building 0} {t2 merging 1}]" {
		t.Fatalf("before the kill: %v", st.Tasks)
	}
	integBefore := strings.TrimSpace(gitOut(t, e, dir, "rev-parse", "agentkit/integration"))
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	orphan := readInt(t, filepath.Join(state, "t1.1.pid"))
	if !processAlive(orphan) {
		t.Fatal("the builder died with the supervisor; the test needs it to outlive it")
	}
	os.WriteFile(filepath.Join(state, "release-full"), nil, 0o644)

	second, out2 := e.startBinary(dir, "job", "start", "j1", "--foreground")
	if code := waitExit(t, second, out2); code != 0 {
		t.Fatalf("restarted supervisor: exit %d\n%s", code, out2.String())
	}
	printed := out2.String()
	for _, want := range []string{"recovered after a restart: the builder's session was cut off", "rolled back a half-done merge (" + integBefore[:10], "Job j1 is done: agentkit/integration is at "} {
		if !strings.Contains(printed, want) {
			t.Errorf("the restart did not print %q:\n%s", want, printed)
		}
	}
	if processAlive(orphan) {
		t.Error("the builder the killed supervisor left is still running")
	}
	// Nothing ran twice that had finished; each task is merged exactly once.
	if n := readInt(t, filepath.Join(state, "t0.count")); n != 1 {
		t.Errorf("t0 built %d times", n)
	}
	if n := readInt(t, filepath.Join(state, "t2.count")); n != 1 {
		t.Errorf("t2 built %d times", n)
	}
	if n := readInt(t, filepath.Join(state, "t1.count")); n != 2 {
		t.Errorf("t1 built %d times; want 2", n)
	}
	s1, _ := os.ReadFile(filepath.Join(state, "t1.1.session"))
	s2, _ := os.ReadFile(filepath.Join(state, "t1.2.session"))
	if len(s1) == 0 || string(s1) != string(s2) {
		t.Errorf("t1's sessions %q %q: the restart must resume it", s1, s2)
	}
	merges := gitOut(t, e, dir, "log", "--first-parent", "--merges", "--format=%s", "agentkit/integration")
	for _, task := range []string{"t0", "t1", "t2"} {
		if n := strings.Count(merges, "j1/"+task+":"); n != 1 {
			t.Errorf("%s merged %d times:\n%s", task, n, merges)
		}
	}
	statusOf()
	if fmt.Sprint(st.Tasks) != "[{t0 merged 1} {t1 merged 2} {t2 merged 1}]" {
		t.Errorf("after the restart: %v", st.Tasks)
	}
	text := e.mustRun(dir, "job", "status")
	for _, want := range []string{"Job j1: done", "TASK", "t1    merged  2", "merged into agentkit/integration"} {
		if !strings.Contains(text, want) {
			t.Errorf("job status lacks %q:\n%s", want, text)
		}
	}
	events := e.mustRun(dir, "events", "--job", "j1", "--task", "t1", "--limit", "100")
	if !strings.Contains(events, "j1/t1") || !strings.Contains(events, "cut off") || strings.Contains(events, "j1/t0") {
		t.Errorf("events:\n%s", events)
	}
	if out := e.mustRun(dir, "job", "clean", "j1"); !strings.Contains(out, "Removed 0 work tree(s) and 3 branch(es)") {
		t.Errorf("clean: %s", out)
	}
	if branches := gitOut(t, e, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/agentkit"); strings.TrimSpace(branches) != "agentkit/integration" {
		t.Errorf("branches left: %q", branches)
	}
}

func TestJobCommands(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	if _, errOut, code := e.run(dir, "job", "status"); code != 1 || !strings.Contains(errOut, "run agentkit init there first") {
		t.Fatalf("%d %s", code, errOut)
	}
	e.mustRun(dir, "init")
	req := filepath.Join(t.TempDir(), "request.md")
	os.WriteFile(req, []byte("Add a calendar.\n\nAcceptance criteria:\n- entries survive a restart\n- bad dates are refused\n"), 0o644)
	if _, errOut, code := e.run(dir, "job", "create", "cal"); code != 2 || !strings.Contains(errOut, "--request-file is required") {
		t.Fatalf("%d %s", code, errOut)
	}
	if _, errOut, code := e.run(dir, "job", "create", "Bad Name", "--request-file", req); code != 1 || !strings.Contains(errOut, "not a usable job name") {
		t.Fatalf("%d %s", code, errOut)
	}
	if out := e.mustRun(dir, "job", "create", "cal", "--request-file", req); !strings.Contains(out, "2 acceptance criteria") {
		t.Fatalf("%s", out)
	}
	if _, errOut, code := e.run(dir, "job", "create", "cal", "--request-file", req); code != 1 || !strings.Contains(errOut, "agentkit job update cal") {
		t.Fatalf("%d %s", code, errOut)
	}
	if out := e.mustRun(dir, "job", "status"); !strings.Contains(out, "Job cal: created") || !strings.Contains(out, "not started: agentkit job start cal") {
		t.Fatalf("%s", out)
	}
	corr := filepath.Join(t.TempDir(), "fix.md")
	os.WriteFile(corr, []byte("Weeks start on Monday."), 0o644)
	if out := e.mustRun(dir, "job", "update", "cal", "--request-file", corr); !strings.Contains(out, "Added revision 2") {
		t.Fatalf("%s", out)
	}
	var jf struct {
		Revisions []struct {
			Revision int
			Request  string
		}
		Acceptance []string
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".ai", "jobs", "cal.json"))
	if err := json.Unmarshal(data, &jf); err != nil || len(jf.Revisions) != 2 || jf.Revisions[1].Request != "Weeks start on Monday." ||
		!strings.HasPrefix(jf.Revisions[0].Request, "Add a calendar.") || len(jf.Acceptance) != 2 {
		t.Fatalf("job file: %s %v", data, err)
	}
	if out := e.mustRun(dir, "job", "start", "cal", "--max-workers", "3"); !strings.Contains(out, "Started cal.") || !strings.Contains(out, "Started the background service (pid ") {
		t.Fatalf("%s", out)
	}
	// The service serves the repository within seconds.
	for deadline := time.Now().Add(30 * time.Second); ; {
		out := e.mustRun(dir, "service", "status")
		if strings.Contains(out, "Repositories served:\n  shop, since") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service status: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, errOut, code := e.run(dir, "job", "clean", "cal"); code != 1 || !strings.Contains(errOut, "once it is done or cancelled") {
		t.Fatalf("%d %s", code, errOut)
	}
	if out := e.mustRun(dir, "status"); !strings.Contains(out, "job cal started, 0 of 0 tasks merged") {
		t.Fatalf("status: %s", out)
	}
	e.mustRun(dir, "job", "cancel", "cal")
	if _, errOut, code := e.run(dir, "job", "start", "cal"); code != 1 || !strings.Contains(errOut, "was cancelled") {
		t.Fatalf("%d %s", code, errOut)
	}
	if out := e.mustRun(dir, "events"); !strings.Contains(out, "cancelled") {
		t.Fatalf("events: %s", out)
	}
	if out := e.mustRun(dir, "events", "--json"); !strings.HasPrefix(out, "[") {
		t.Fatalf("events --json: %s", out)
	}
}

func gitOut(t *testing.T, e *env, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func readInt(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForegroundStopsCleanlyOnInterrupt(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	e.mustRun(dir, "init")
	state := t.TempDir()
	scriptedProject(t, dir, state)
	os.WriteFile(filepath.Join(dir, ".ai", "tasks.yaml"), []byte("tasks:\n  - {id: t1, job_id: j1, kind: SAFE_PARALLEL}\n"), 0o644)
	req := filepath.Join(t.TempDir(), "request.md")
	os.WriteFile(req, []byte("One thing.\n"), 0o644)
	e.mustRun(dir, "job", "create", "j1", "--request-file", req)

	cmd, out := e.startBinary(dir, "job", "start", "j1", "--foreground")
	waitUntil(t, "t1 to run", out, func() bool { return exists(filepath.Join(state, "t1.1.pid")) })
	builder := readInt(t, filepath.Join(state, "t1.1.pid"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, out); code != 0 || !strings.Contains(out.String(), "Stopped. Run agentkit job start --foreground to continue.") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if processAlive(builder) {
		t.Error("Ctrl-C left the builder running")
	}
	again, out2 := e.startBinary(dir, "job", "start", "--foreground")
	if code := waitExit(t, again, out2); code != 0 || !strings.Contains(out2.String(), "Job j1 is done") {
		t.Fatalf("exit %d:\n%s", code, out2.String())
	}
	s1, _ := os.ReadFile(filepath.Join(state, "t1.1.session"))
	s2, _ := os.ReadFile(filepath.Join(state, "t1.2.session"))
	if string(s1) != string(s2) {
		t.Errorf("sessions %q %q: the next start must continue the session", s1, s2)
	}
}
