package runtimes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// run starts one session of the named runtime playing a testdata script.
func (f *fixture) run(name string, cfg project.RuntimeConfig, req runtimes.Request) runtimes.Outcome {
	f.t.Helper()
	if req.Dir == "" {
		req.Dir = f.work
	}
	out, err := f.runtime(name, cfg).Run(context.Background(), req)
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	return out
}

func TestClaudeSession(t *testing.T) {
	f := newFixture(t)
	f.script("claude-success")
	events := filepath.Join(f.dir, ".ai", "runtime", "process-1", "events.jsonl")
	out := f.run("claude", project.RuntimeConfig{Model: "claude-sonnet-4-5"}, runtimes.Request{Prompt: "build it", EventsPath: events})

	want := runtimes.Outcome{
		ExitCode:  0,
		SessionID: "4f2c8a1e-7b3d-4e5f-9a6b-1c2d3e4f5a6b",
		FinalText: "The store keeps entries across restarts.\n{\"agentkit\": {\"status\": \"done\"}}",
		Usage:     runtimes.Usage{Input: 12 + 3000 + 30000, Output: 250, Cached: 30000},
		CostUSD:   0.0421,
		Class:     runtimes.ClassNone,
	}
	checkOutcome(t, out, want)

	// Every stdout line of the CLI is in the events log, in order, between
	// agentkit's start and end notes.
	script, err := os.ReadFile(filepath.Join("testdata", "fake", "claude-success.txt"))
	if err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, events)
	var stdout []string
	for _, ev := range evs {
		if ev.Channel == runtimes.ChannelStdout {
			stdout = append(stdout, ev.Text)
		}
		if ev.At.IsZero() {
			t.Fatalf("event without time: %+v", ev)
		}
	}
	if want := strings.Split(strings.TrimRight(string(script), "\n"), "\n"); strings.Join(stdout, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events log stdout lines differ from what the CLI printed:\n%q", stdout)
	}
	if first, last := evs[0], evs[len(evs)-1]; first.Channel != runtimes.ChannelAgentkit || !strings.HasPrefix(first.Text, "start: claude -p") ||
		last.Channel != runtimes.ChannelAgentkit || !strings.HasPrefix(last.Text, "end: exit status 0") {
		t.Fatalf("start/end notes missing: %+v ... %+v", first, last)
	}
	if fi, err := os.Stat(events); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("events log mode: %v %v", fi.Mode(), err)
	}
}

func TestClaudeResumedSession(t *testing.T) {
	f := newFixture(t)
	f.script("claude-resumed")
	const sid = "4f2c8a1e-7b3d-4e5f-9a6b-1c2d3e4f5a6b"
	out := f.run("claude", project.RuntimeConfig{Model: "claude-sonnet-4-5"}, runtimes.Request{Prompt: "The gate failed: TestDates", Resume: sid})
	checkOutcome(t, out, runtimes.Outcome{
		SessionID: sid,
		FinalText: "Fixed the failing gate: dates are validated now.",
		Usage:     runtimes.Usage{Input: 6 + 512 + 18000, Output: 40, Cached: 18000},
		CostUSD:   0.0113,
	})
	c := f.onlyCall()
	if i := indexOf(c.Args, "--resume"); i < 0 || c.Args[i+1] != sid {
		t.Fatalf("not resumed: %q", c.Args)
	}
	if c.Stdin != "The gate failed: TestDates" {
		t.Fatalf("stdin %q", c.Stdin)
	}
}

// TestClaudeSessionWithoutResult: a session that died before its result
// event still reports its id, its last text and the usage of its messages
// (each message counted once although every content block repeats it).
func TestClaudeSessionWithoutResult(t *testing.T) {
	f := newFixture(t)
	f.script("claude-crash")
	out := f.run("claude", project.RuntimeConfig{}, runtimes.Request{Prompt: "x"})
	checkOutcome(t, out, runtimes.Outcome{
		ExitCode:  1,
		SessionID: "d37e8f9a-0b1c-4d2e-4f5a-6b7c8d9e0f1a",
		FinalText: "Reading the store.",
		Usage:     runtimes.Usage{Input: 3 + 100 + 900, Output: 7, Cached: 900},
		Class:     runtimes.ClassCrash,
		Message:   "TypeError: Cannot read properties of undefined (reading 'map')",
	})
}

func TestCodexSession(t *testing.T) {
	f := newFixture(t)
	f.script("codex-success")
	out := f.run("codex", project.RuntimeConfig{Model: "gpt-5-codex"}, runtimes.Request{Prompt: "review", Role: runtimes.RoleReadOnly})
	checkOutcome(t, out, runtimes.Outcome{
		SessionID: "0199a213-81c0-7800-8aa1-bbab2a035a53",
		FinalText: "The change is sound.\n{\"agentkit\": {\"verdict\": \"pass\", \"findings\": []}}",
		// Usage is the sum over turns.
		Usage: runtimes.Usage{Input: 24763 + 1200, Output: 122 + 30, Cached: 24448 + 1000},
	})
}

func TestOpenCodeSession(t *testing.T) {
	f := newFixture(t)
	f.script("opencode-success")
	out := f.run("opencode", project.RuntimeConfig{Model: "local/qwen3-coder", MaxSessions: 1}, runtimes.Request{Prompt: "build"})
	checkOutcome(t, out, runtimes.Outcome{
		SessionID: "ses_494719016ffe85dkDMj0FPRbHK",
		FinalText: "Added the calendar store.\n{\"agentkit\": {\"status\": \"done\"}}",
		Usage:     runtimes.Usage{Input: 1200 + 1500 + 1100, Output: 80 + 40 + 10, Cached: 1100},
		CostUSD:   0.0015,
	})
}

// TestCommandSession: any program, the prompt on stdin, AGENTKIT_SESSION
// naming the session, resumed by calling it again with the same id; its
// outcome is its exit status and stdout's last lines.
func TestCommandSession(t *testing.T) {
	f := newFixture(t)
	f.scriptText("working on: calendar-store", "@echo-stdin", `{"agentkit": {"status": "done"}}`)
	cfg := project.RuntimeConfig{Argv: []string{"fakecli", "--builder"}}
	env := []string{"AGENTKIT_TASK=calendar-store", "AGENTKIT_JOB=first-draft", "AGENTKIT_ROOT=/repo"}

	first := f.run("command", cfg, runtimes.Request{Prompt: "build the store", Session: "ses-calendar-store", Env: env})
	checkOutcome(t, first, runtimes.Outcome{
		SessionID: "ses-calendar-store",
		FinalText: "working on: calendar-store\nbuild the store\n{\"agentkit\": {\"status\": \"done\"}}",
	})
	second := f.run("command", cfg, runtimes.Request{Prompt: "hint: use the v2 API", Session: "ses-calendar-store", Resume: "ses-calendar-store", Env: env})
	if second.SessionID != "ses-calendar-store" || !strings.Contains(second.FinalText, "hint: use the v2 API") {
		t.Fatalf("resumed: %+v", second)
	}
	calls := f.calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	for i, c := range calls {
		if v, _ := c.getenv("AGENTKIT_SESSION"); v != "ses-calendar-store" {
			t.Errorf("call %d: AGENTKIT_SESSION=%q", i, v)
		}
		if v, _ := c.getenv("AGENTKIT_TASK"); v != "calendar-store" {
			t.Errorf("call %d: AGENTKIT_TASK=%q", i, v)
		}
		if len(c.Args) != 1 || c.Args[0] != "--builder" {
			t.Errorf("call %d: args %q", i, c.Args)
		}
	}
	if calls[1].Stdin != "hint: use the v2 API" {
		t.Fatalf("resume stdin %q", calls[1].Stdin)
	}

	// Without an id from the caller, the runtime makes one and reports it.
	f2 := newFixture(t)
	f2.scriptText("ok")
	out := f2.run("command", cfg, runtimes.Request{})
	v, _ := f2.onlyCall().getenv("AGENTKIT_SESSION")
	if out.SessionID == "" || v != out.SessionID {
		t.Fatalf("made-up session id %q, child saw %q", out.SessionID, v)
	}
}

func TestCommandFailure(t *testing.T) {
	f := newFixture(t)
	f.scriptText("compiling", "@stderr panic: runtime error: index out of range [3] with length 3", "@exit 2")
	out := f.run("command", project.RuntimeConfig{Argv: []string{"fakecli"}}, runtimes.Request{Session: "s1"})
	checkOutcome(t, out, runtimes.Outcome{
		ExitCode:  2,
		SessionID: "s1",
		FinalText: "compiling",
		Class:     runtimes.ClassCrash,
		Message:   "panic: runtime error: index out of range [3] with length 3",
	})
}

// TestCommandRelativeArgv: a relative argv[0] such as ./scripts/builder.sh
// is found in the session's directory, as a worktree holds the script.
func TestCommandRelativeArgv(t *testing.T) {
	f := newFixture(t)
	scripts := filepath.Join(f.work, "scripts")
	if err := os.Mkdir(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(binDir, exe("fakecli")), filepath.Join(scripts, exe("builder"))); err != nil {
		t.Fatal(err)
	}
	f.scriptText("built")
	out := f.run("command", project.RuntimeConfig{Argv: []string{"./scripts/" + exe("builder")}}, runtimes.Request{Session: "s"})
	if out.FinalText != "built" || f.onlyCall().Name != "builder" {
		t.Fatalf("%+v", out)
	}
}

func TestStartErrors(t *testing.T) {
	f := newFixture(t)
	rt := f.runtime("command", project.RuntimeConfig{Argv: []string{"./missing.sh"}})
	if _, err := rt.Run(context.Background(), runtimes.Request{Dir: f.work}); err == nil || !strings.Contains(err.Error(), "missing.sh") {
		t.Fatalf("missing program: %v", err)
	}
	rt = f.runtime("claude", project.RuntimeConfig{})
	if _, err := rt.Run(context.Background(), runtimes.Request{Dir: filepath.Join(f.dir, "no-such-dir")}); err == nil || !strings.Contains(err.Error(), "no-such-dir") {
		t.Fatalf("missing dir: %v", err)
	}
	blocker := filepath.Join(f.dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(context.Background(), runtimes.Request{Dir: f.work, EventsPath: filepath.Join(blocker, "events.jsonl")}); err == nil ||
		!strings.Contains(err.Error(), "events") {
		t.Fatalf("unwritable events log: %v", err)
	}
	if len(f.calls()) != 0 {
		t.Fatal("a session that could not start ran anyway")
	}
}

func checkOutcome(t *testing.T, got, want runtimes.Outcome) {
	t.Helper()
	if got.Duration <= 0 {
		t.Errorf("duration %v", got.Duration)
	}
	got.Duration, want.Duration = 0, 0
	if !got.ResetAt.Equal(want.ResetAt) {
		t.Errorf("ResetAt = %v, want %v", got.ResetAt, want.ResetAt)
	}
	got.ResetAt = want.ResetAt
	if got != want {
		t.Errorf("outcome\n got %+v\nwant %+v", got, want)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// projectCfg is a runtime configuration with a model, as agentkit init writes.
func projectCfg() project.RuntimeConfig { return project.RuntimeConfig{Model: "test-model"} }

func TestRequestChecks(t *testing.T) {
	f := newFixture(t)
	f.scriptText("ok")
	rt := f.runtime("claude", projectCfg())
	if _, err := rt.Run(t.Context(), runtimes.Request{Dir: f.work, Role: "reviewer"}); err == nil || !strings.Contains(err.Error(), `"reviewer"`) {
		t.Fatalf("unknown role: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := rt.Run(ctx, runtimes.Request{Dir: f.work}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before start: %v", err)
	}
	if len(f.calls()) != 0 {
		t.Fatal("a refused session ran")
	}
	// A relative directory reaches Codex's --cd as an absolute one.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, f.work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.runtime("codex", projectCfg()).Run(t.Context(), runtimes.Request{Dir: rel}); err != nil {
		t.Fatal(err)
	}
	c := f.onlyCall()
	if i := indexOf(c.Args, "--cd"); i < 0 || c.Args[i+1] != f.work {
		t.Fatalf("--cd not absolute: %q", c.Args)
	}
}
