package runtimes_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// binDir holds the fake CLIs (claude, codex, opencode, fakecli), built once per test run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentkit-fakecli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := 2
	if err := buildFakes(dir); err != nil {
		fmt.Fprintln(os.Stderr, "building the fake CLIs:", err)
	} else {
		binDir = dir
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildFakes builds internal/fakecli into dir and installs it under every CLI's name.
func buildFakes(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	fake := filepath.Join(dir, exe("fakecli"))
	cmd := exec.Command(goBin, "build", "-o", fake, "./internal/fakecli")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	for _, name := range []string{"claude", "codex", "opencode"} {
		if err := copyFile(fake, filepath.Join(dir, exe(name))); err != nil {
			return err
		}
	}
	return nil
}

func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Test clock: Wednesday 11 June 2025, 10:20 in Berlin.
var (
	berlin  = mustZone("Europe/Berlin")
	newYork = mustZone("America/New_York")
	testNow = time.Date(2025, 6, 11, 10, 20, 0, 0, berlin)
)

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// fixture is one test's fake world: a PATH holding the fake CLIs, a work
// directory, and the file where the fakes record how they were called.
type fixture struct {
	t      *testing.T
	dir    string
	work   string
	record string
	env    []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, work: work, record: filepath.Join(dir, "record.jsonl")}
	f.env = []string{"PATH=" + binDir, "HOME=" + dir, "LANG=C.UTF-8", "FAKECLI_RECORD=" + f.record}
	return f
}

// setenv adds KEY=VALUE to the parent environment the runtimes filter.
func (f *fixture) setenv(kv ...string) { f.env = append(f.env, kv...) }

// script makes the fakes play testdata/fake/<name>.txt.
func (f *fixture) script(name string) {
	f.t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake", name+".txt"))
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		f.t.Fatal(err)
	}
	f.setenv("FAKECLI_SCRIPT=" + p)
}

// scriptText makes the fakes play the given lines.
func (f *fixture) scriptText(lines ...string) {
	f.setenv("FAKECLI_SCRIPT=" + f.writeScript("script.txt", lines...))
}

// writeScript writes a script file and returns its path.
func (f *fixture) writeScript(name string, lines ...string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// path returns a file name inside the fixture's directory.
func (f *fixture) path(name string) string { return filepath.Join(f.dir, name) }

func (f *fixture) options() runtimes.Options {
	return runtimes.Options{
		Env:      f.env,
		Grace:    200 * time.Millisecond,
		Drain:    200 * time.Millisecond,
		Now:      func() time.Time { return testNow },
		Location: berlin,
	}
}

func (f *fixture) runtime(name string, cfg project.RuntimeConfig) runtimes.Runtime {
	return f.runtimeWith(name, cfg, f.options())
}

func (f *fixture) runtimeWith(name string, cfg project.RuntimeConfig, opts runtimes.Options) runtimes.Runtime {
	f.t.Helper()
	rt, err := runtimes.New(name, cfg, opts)
	if err != nil {
		f.t.Fatalf("New(%s): %v", name, err)
	}
	return rt
}

// call is what a fake recorded about one invocation.
type call struct {
	Name  string   `json:"name"`
	Args  []string `json:"args"`
	Stdin string   `json:"stdin"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir"`
	Pid   int      `json:"pid"`
}

// getenv returns the value of name in the recorded environment, and whether it was there.
func (c call) getenv(name string) (string, bool) {
	for _, kv := range c.Env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v, true
		}
	}
	return "", false
}

// calls returns every invocation recorded so far.
func (f *fixture) calls() []call {
	f.t.Helper()
	file, err := os.Open(f.record)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	defer file.Close()
	var out []call
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			f.t.Fatalf("bad record line %q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// onlyCall returns the single recorded invocation.
func (f *fixture) onlyCall() call {
	f.t.Helper()
	cs := f.calls()
	if len(cs) != 1 {
		f.t.Fatalf("want exactly one call of the fake CLI, got %d", len(cs))
	}
	return cs[0]
}

// readEvents reads an events.jsonl file, checking every line's shape.
func readEvents(t *testing.T, path string) []runtimes.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtimes.Event
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("events line is not JSON: %q", line)
		}
		if len(raw) != 3 || raw["at"] == nil || raw["channel"] == nil || raw["text"] == nil {
			t.Fatalf("events line is not {at, channel, text}: %q", line)
		}
		var ev runtimes.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
