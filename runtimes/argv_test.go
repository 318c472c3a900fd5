package runtimes_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// TestArgv runs every adapter, role by role, with and without resume, and
// checks the exact arguments its fake CLI received (RUNTIMES.md), and that the
// prompt came on stdin and never in argv.
func TestArgv(t *testing.T) {
	const prompt = "Build the calendar store.\nKeep entries across restarts."
	claudeCfg := project.RuntimeConfig{Model: "claude-sonnet-4-5", Effort: "high", MaxTurns: 30}
	codexCfg := project.RuntimeConfig{Model: "gpt-5-codex", Effort: "high"}
	openCfg := project.RuntimeConfig{Model: "local/qwen3-coder", MaxSessions: 1}
	const sid = "4f2c8a1e-7b3d-4e5f-9a6b-1c2d3e4f5a6b"
	tail := []string{"--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose"}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }

	cases := []struct {
		name    string
		runtime string
		cfg     project.RuntimeConfig
		req     runtimes.Request
		want    func(dir string) []string
	}{
		{"claude writer", "claude", claudeCfg, runtimes.Request{Role: runtimes.RoleWriter},
			func(string) []string {
				return cat([]string{"-p", "--model", "claude-sonnet-4-5", "--effort", "high", "--max-turns", "30"}, tail)
			}},
		{"claude writer resumed", "claude", claudeCfg, runtimes.Request{Role: runtimes.RoleWriter, Resume: sid},
			func(string) []string {
				return cat([]string{"-p", "--model", "claude-sonnet-4-5", "--effort", "high", "--resume", sid, "--max-turns", "30"}, tail)
			}},
		{"claude read-only", "claude", claudeCfg, runtimes.Request{Role: runtimes.RoleReadOnly},
			func(string) []string {
				return cat([]string{"-p", "--model", "claude-sonnet-4-5", "--effort", "high", "--max-turns", "30"}, tail, []string{"--tools", "Read,Grep,Glob"})
			}},
		{"claude read-only resumed", "claude", claudeCfg, runtimes.Request{Role: runtimes.RoleReadOnly, Resume: sid},
			func(string) []string {
				return cat([]string{"-p", "--model", "claude-sonnet-4-5", "--effort", "high", "--resume", sid, "--max-turns", "30"}, tail, []string{"--tools", "Read,Grep,Glob"})
			}},
		{"claude request overrides, no effort, no max turns", "claude", project.RuntimeConfig{Model: "claude-sonnet-4-5"},
			runtimes.Request{Model: "claude-opus-4-1"},
			func(string) []string { return cat([]string{"-p", "--model", "claude-opus-4-1"}, tail) }},
		{"claude request max turns", "claude", claudeCfg, runtimes.Request{MaxTurns: 5, Effort: "low"},
			func(string) []string {
				return cat([]string{"-p", "--model", "claude-sonnet-4-5", "--effort", "low", "--max-turns", "5"}, tail)
			}},

		{"codex writer", "codex", codexCfg, runtimes.Request{Role: runtimes.RoleWriter},
			func(dir string) []string {
				return []string{"exec", "--json", "-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`,
					"--cd", dir, "--model", "gpt-5-codex", "-c", `model_reasoning_effort="high"`, "-"}
			}},
		{"codex writer resumed", "codex", codexCfg, runtimes.Request{Role: runtimes.RoleWriter, Resume: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
			func(string) []string {
				return []string{"exec", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "--json", "-c", `sandbox_mode="workspace-write"`,
					"-c", `approval_policy="never"`, "--model", "gpt-5-codex", "-c", `model_reasoning_effort="high"`, "-"}
			}},
		{"codex read-only", "codex", codexCfg, runtimes.Request{Role: runtimes.RoleReadOnly},
			func(dir string) []string {
				return []string{"exec", "--json", "-c", `sandbox_mode="read-only"`, "-c", `approval_policy="never"`,
					"--cd", dir, "--model", "gpt-5-codex", "-c", `model_reasoning_effort="high"`, "-"}
			}},
		{"codex read-only resumed", "codex", codexCfg, runtimes.Request{Role: runtimes.RoleReadOnly, Resume: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
			func(string) []string {
				return []string{"exec", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "--json", "-c", `sandbox_mode="read-only"`,
					"-c", `approval_policy="never"`, "--model", "gpt-5-codex", "-c", `model_reasoning_effort="high"`, "-"}
			}},
		{"codex without model or effort", "codex", project.RuntimeConfig{}, runtimes.Request{},
			func(dir string) []string {
				return []string{"exec", "--json", "-c", `sandbox_mode="workspace-write"`, "-c", `approval_policy="never"`, "--cd", dir, "-"}
			}},

		{"opencode writer", "opencode", openCfg, runtimes.Request{Role: runtimes.RoleWriter},
			func(string) []string { return []string{"run", "--format", "json", "--model", "local/qwen3-coder"} }},
		{"opencode writer resumed", "opencode", openCfg, runtimes.Request{Role: runtimes.RoleWriter, Resume: "ses_494719016ffe85dkDMj0FPRbHK"},
			func(string) []string {
				return []string{"run", "--format", "json", "--model", "local/qwen3-coder", "--session", "ses_494719016ffe85dkDMj0FPRbHK"}
			}},
		{"opencode read-only", "opencode", openCfg, runtimes.Request{Role: runtimes.RoleReadOnly},
			func(string) []string {
				return []string{"run", "--format", "json", "--model", "local/qwen3-coder", "--agent", "plan"}
			}},
		{"opencode read-only resumed", "opencode", openCfg, runtimes.Request{Role: runtimes.RoleReadOnly, Resume: "ses_494719016ffe85dkDMj0FPRbHK"},
			func(string) []string {
				return []string{"run", "--format", "json", "--model", "local/qwen3-coder", "--session", "ses_494719016ffe85dkDMj0FPRbHK", "--agent", "plan"}
			}},

		{"command writer", "command", project.RuntimeConfig{Argv: []string{"fakecli", "--task-flag", "two words"}},
			runtimes.Request{Role: runtimes.RoleWriter, Session: "ses-build-1"},
			func(string) []string { return []string{"--task-flag", "two words"} }},
		{"command read-only resumed", "command", project.RuntimeConfig{Argv: []string{"fakecli"}},
			runtimes.Request{Role: runtimes.RoleReadOnly, Session: "ses-build-1", Resume: "ses-build-1"},
			func(string) []string { return []string{} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			rt := f.runtime(c.runtime, c.cfg)
			req := c.req
			req.Dir = f.work
			req.Prompt = prompt
			out, err := rt.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode != 0 || out.Class != runtimes.ClassNone {
				t.Fatalf("fake session failed: %+v", out)
			}
			got := f.onlyCall()
			want := c.want(f.work)
			if !slices.Equal(got.Args, want) {
				t.Fatalf("argv\n got %q\nwant %q", got.Args, want)
			}
			if got.Stdin != prompt {
				t.Fatalf("stdin = %q, want the prompt", got.Stdin)
			}
			for _, a := range got.Args {
				if strings.Contains(a, "calendar store") {
					t.Fatalf("the prompt leaked into argv: %q", got.Args)
				}
			}
			if d1, d2 := evalDir(t, got.Dir), evalDir(t, f.work); d1 != d2 {
				t.Fatalf("ran in %s, want %s", d1, d2)
			}
		})
	}
}

func evalDir(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
