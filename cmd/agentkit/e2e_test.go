package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentkit-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentkit")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building agentkit: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one user's world: an agentkit home and a git configuration.
type env struct {
	t    testing.TB
	home string
	vars []string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	gitcfg := filepath.Join(dir, "gitconfig")
	os.WriteFile(gitcfg, []byte("[user]\n\tname = Owner\n\temail = owner@example.test\n[init]\n\tdefaultBranch = main\n"), 0o644)
	e := &env{t: t, home: filepath.Join(dir, "akhome")}
	e.vars = []string{
		"AGENTKIT_HOME=" + e.home,
		"HOME=" + dir,
		"GIT_CONFIG_GLOBAL=" + gitcfg,
		"GIT_CONFIG_NOSYSTEM=1",
		"PATH=" + os.Getenv("PATH"),
	}
	// A test that started the background service (job start does) stops it.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(e.home, "service.pid")); err == nil {
			e.run(dir, "service", "stop")
		}
	})
	return e
}

// run runs the built binary in dir and returns stdout, stderr and the exit code.
func (e *env) run(dir string, args ...string) (string, string, int) {
	e.t.Helper()
	return e.runWith(dir, "", args...)
}

// runWith runs the binary in dir with stdin.
func (e *env) runWith(dir, stdin string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (e *env) mustRun(dir string, args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(dir, args...)
	if code != 0 {
		e.t.Fatalf("agentkit %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (e *env) git(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// repo makes a git repository with one commit.
func (e *env) repo(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	e.git(dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644)
	e.git(dir, "add", "README")
	e.git(dir, "commit", "-q", "-m", "first")
	return dir
}

func (e *env) store() *problems.Store {
	e.t.Helper()
	db, err := state.Open(context.Background(), filepath.Join(e.home, "state.db"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return problems.NewStore(db)
}

func TestInit(t *testing.T) {
	e := newEnv(t)
	notRepo := t.TempDir()
	if _, errOut, code := e.run(notRepo, "init"); code == 0 || !strings.Contains(errOut, "not inside a Git repository") {
		t.Fatalf("init outside a repo: %d %s", code, errOut)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.MkdirAll(empty, 0o755)
	e.git(empty, "init", "-q")
	if _, errOut, code := e.run(empty, "init"); code == 0 || !strings.Contains(errOut, "has no commit yet") {
		t.Fatalf("init without commit: %d %s", code, errOut)
	}

	dir := e.repo("Shop")
	// The owner's own uncommitted edit must survive init.
	os.WriteFile(filepath.Join(dir, "README"), []byte("edited\n"), 0o644)
	out := e.mustRun(dir, "init")
	if !strings.Contains(out, `as "shop"`) || !strings.Contains(out, "Wrote .ai/project.yaml") {
		t.Fatalf("%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "README")); string(data) != "edited\n" {
		t.Fatal("init changed the owner's file")
	}
	ignore, _ := os.ReadFile(filepath.Join(dir, ".ai", ".gitignore"))
	if string(ignore) != "runtime/\nworktrees/\n" {
		t.Fatalf(".gitignore: %q", ignore)
	}
	proj, _ := os.ReadFile(filepath.Join(dir, ".ai", "project.yaml"))
	for _, want := range []string{"review: once", "max_workers: 2", "integration_branch: agentkit/integration", "default: claude", "job_tokens: 0"} {
		if !strings.Contains(string(proj), want) {
			t.Errorf("project.yaml lacks %q:\n%s", want, proj)
		}
	}
	before := snapshot(t, filepath.Join(dir, ".ai"))
	out = e.mustRun(dir, "init")
	if !strings.Contains(out, "already registered") || !strings.Contains(out, "Nothing to change") {
		t.Fatalf("second init: %s", out)
	}
	if after := snapshot(t, filepath.Join(dir, ".ai")); after != before {
		t.Fatal("second init changed .ai/")
	}
	// Running it from a subfolder finds the same repository.
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	if out := e.mustRun(filepath.Join(dir, "sub"), "init"); !strings.Contains(out, "already registered") {
		t.Fatalf("%s", out)
	}

	other := e.repo("shop")
	if _, errOut, code := e.run(other, "init"); code == 0 || !strings.Contains(errOut, `the name "shop" is taken`) || !strings.Contains(errOut, "--name") {
		t.Fatalf("clash: %d %s", code, errOut)
	}
	if out := e.mustRun(other, "init", "--name", "shop2"); !strings.Contains(out, `as "shop2"`) {
		t.Fatalf("%s", out)
	}
	if _, errOut, code := e.run(other, "init", "--name", "Bad Name"); code == 0 || !strings.Contains(errOut, "not a usable repository name") {
		t.Fatalf("%d %s", code, errOut)
	}

	var st struct {
		Repos []struct {
			Name string `json:"name"`
		} `json:"repos"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(dir, "status", "--json")), &st); err != nil || len(st.Repos) != 2 || st.Repos[0].Name != "shop" {
		t.Fatalf("status: %+v %v", st, err)
	}
}

func TestInitNeedsAuthor(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("r")
	os.WriteFile(filepath.Join(e.home+"-gitcfg"), nil, 0o644)
	for i, v := range e.vars {
		if strings.HasPrefix(v, "GIT_CONFIG_GLOBAL=") {
			e.vars[i] = "GIT_CONFIG_GLOBAL=" + e.home + "-gitcfg"
		}
	}
	if _, errOut, code := e.run(dir, "init"); code == 0 || !strings.Contains(errOut, "git config --global user.email") {
		t.Fatalf("%d %s", code, errOut)
	}
}

func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "=" + string(data) + fi.ModTime().String() + "\n")
		}
		return nil
	})
	return b.String()
}

func TestProblemCommands(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	e.mustRun(dir, "init")
	if out := e.mustRun(dir, "problem", "list"); !strings.Contains(out, "No open problems") {
		t.Fatalf("%s", out)
	}
	s := e.store()
	ctx := context.Background()
	gate, _ := s.Create(ctx, problems.New{Repo: "shop", Job: "j1", Task: "parser", Kind: problems.GateFailed,
		Summary: "gate fast failed: TestParse", Detail: "The task gate failed twice.", LogTail: "--- FAIL: TestParse\nFAIL"})
	auth, _ := s.Create(ctx, problems.New{Repo: "shop", Job: "j1", Task: "cli", Kind: problems.AuthRequired, Summary: "claude is not logged in"})

	out := e.mustRun(dir, "problem", "list")
	for _, want := range []string{"CODE", string(gate), string(auth), "j1/parser", "gate_failed", "claude is not logged in"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	out = e.mustRun(dir, "problem", "show", strings.ToLower(string(gate)))
	for _, want := range []string{"gate fast failed", "--- FAIL: TestParse", "Reply with one of:", "hint <words>", "agentkit problem act " + string(gate)} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	var shown problems.Problem
	if err := json.Unmarshal([]byte(e.mustRun(dir, "problem", "show", string(gate), "--json")), &shown); err != nil || shown.Code != gate || shown.LogTail == "" || len(shown.Replies) != 4 {
		t.Fatalf("show --json: %+v %v", shown, err)
	}

	if _, errOut, code := e.run(dir, "problem", "show", "BBBBBB"); code != 1 || !strings.Contains(errOut, "no problem BBBBBB") {
		t.Fatalf("%d %s", code, errOut)
	}
	if _, errOut, code := e.run(dir, "problem", "show", "HELLO1"); code != 1 || !strings.Contains(errOut, "6 letters") {
		t.Fatalf("%d %s", code, errOut)
	}
	if _, errOut, code := e.run(dir, "problem", "act", string(auth), "hint", "log", "in"); code != 1 || !strings.Contains(errOut, "does not offer hint; it offers: retry, skip") {
		t.Fatalf("%d %s", code, errOut)
	}
	if _, errOut, code := e.run(dir, "problem", "act", string(gate)); code != 2 || !strings.Contains(errOut, "give the problem's code and a reply") {
		t.Fatalf("%d %s", code, errOut)
	}
	if _, errOut, code := e.run(dir, "problem", "act", string(gate), "hint"); code != 1 || !strings.Contains(errOut, "needs words") {
		t.Fatalf("%d %s", code, errOut)
	}
	if out := e.mustRun(dir, "problem", "act", string(gate), "HINT:", "use", "the", "v2", "API"); !strings.Contains(out, `Recorded "hint use the v2 API"`) {
		t.Fatalf("%s", out)
	}
	if _, errOut, code := e.run(dir, "problem", "act", string(gate), "retry"); code != 1 || !strings.Contains(errOut, `answered "hint use the v2 API"`) || !strings.Contains(errOut, "through terminal") {
		t.Fatalf("%d %s", code, errOut)
	}
	p, _ := s.Get(ctx, gate)
	if p.Decision == nil || p.Decision.Words != "use the v2 API" || p.Decision.Channel != problems.Terminal {
		t.Fatalf("%+v", p.Decision)
	}
	var list []problems.Problem
	if err := json.Unmarshal([]byte(e.mustRun(dir, "problem", "list", "--json")), &list); err != nil || len(list) != 1 || list[0].Code != auth {
		t.Fatalf("open list: %+v %v", list, err)
	}
	if err := json.Unmarshal([]byte(e.mustRun(dir, "problem", "list", "--all", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("all list: %+v %v", list, err)
	}
}

func TestConcurrentActYieldsOneDecision(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	e.mustRun(dir, "init")
	s := e.store()
	code, err := s.Create(context.Background(), problems.New{Repo: "shop", Kind: problems.Crashed, Summary: "crashed"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply := []string{"retry", "skip"}[i%2]
			_, errs[i], codes[i] = e.run(dir, "problem", "act", string(code), reply)
		}()
	}
	wg.Wait()
	ok := 0
	for i, c := range codes {
		switch {
		case c == 0:
			ok++
		case !strings.Contains(errs[i], "is answered"):
			t.Errorf("process %d: exit %d: %s", i, c, errs[i])
		}
	}
	var decisions int
	s.DB().QueryRow("SELECT count(*) FROM decisions").Scan(&decisions)
	if ok != 1 || decisions != 1 {
		t.Fatalf("%d processes succeeded, %d decisions; want 1 and 1", ok, decisions)
	}
}

func TestPauseResumeAndStatus(t *testing.T) {
	e := newEnv(t)
	dir := e.repo("shop")
	e.mustRun(dir, "init")
	if _, errOut, code := e.run(dir, "pause", "--repo", "nope"); code == 0 || !strings.Contains(errOut, "registered: shop") {
		t.Fatalf("%d %s", code, errOut)
	}
	e.mustRun(dir, "pause", "--repo", "shop")
	if out := e.mustRun(dir, "status"); !strings.Contains(out, "yes, by") {
		t.Fatalf("%s", out)
	}
	e.mustRun(dir, "pause")
	if out := e.mustRun(dir, "resume", "--repo", "shop"); !strings.Contains(out, "every repository is still paused") {
		t.Fatalf("%s", out)
	}
	if out := e.mustRun(dir, "status"); !strings.Contains(out, "All work is paused") {
		t.Fatalf("%s", out)
	}
	e.mustRun(dir, "resume")
	var st struct {
		PausedAll bool `json:"paused_all"`
		Repos     []struct {
			Paused bool `json:"paused"`
		} `json:"repos"`
	}
	json.Unmarshal([]byte(e.mustRun(dir, "status", "--json")), &st)
	if st.PausedAll || len(st.Repos) != 1 || st.Repos[0].Paused {
		t.Fatalf("%+v", st)
	}
}

func TestVersionAndUsage(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	if out := e.mustRun(dir, "version"); !strings.HasPrefix(out, "agentkit ") || !strings.Contains(out, "revision") {
		t.Fatalf("%s", out)
	}
	if _, errOut, code := e.run(dir, "problem", "list", "--bogus"); code != 2 || !strings.Contains(errOut, "unknown flag") {
		t.Fatalf("%d %s", code, errOut)
	}
}
