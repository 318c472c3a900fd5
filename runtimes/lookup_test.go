package runtimes_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

func TestPathAndVersion(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"claude", "codex", "opencode"} {
		rt := f.runtime(name, project.RuntimeConfig{})
		p, err := rt.Path()
		if err != nil || p != filepath.Join(binDir, exe(name)) {
			t.Fatalf("%s Path = %q, %v", name, p, err)
		}
		v, err := rt.Version(context.Background())
		if err != nil || v != name+" 9.9.9 (fake)" {
			t.Fatalf("%s Version = %q, %v", name, v, err)
		}
		if rt.Name() != name {
			t.Fatalf("Name %q", rt.Name())
		}
	}
	if calls := f.calls(); len(calls) != 0 {
		t.Fatalf("--version must not start a session: %d recorded", len(calls))
	}
}

// TestEnvPin: AGENTKIT_CLAUDE_CLI (and friends) win over PATH.
func TestEnvPin(t *testing.T) {
	f := newFixture(t)
	fake := filepath.Join(binDir, exe("fakecli"))
	for name, pin := range map[string]string{"claude": "AGENTKIT_CLAUDE_CLI", "codex": "AGENTKIT_CODEX_CLI", "opencode": "AGENTKIT_OPENCODE_CLI"} {
		opts := f.options()
		opts.Env = append(append([]string(nil), opts.Env...), pin+"="+fake)
		rt := f.runtimeWith(name, project.RuntimeConfig{}, opts)
		if p, err := rt.Path(); err != nil || p != fake {
			t.Fatalf("%s with %s: %q %v", name, pin, p, err)
		}
		if v, _ := rt.Version(context.Background()); v != "fakecli 9.9.9 (fake)" {
			t.Fatalf("pinned version %q", v)
		}
		opts.Env = append(opts.Env, pin+"="+filepath.Join(f.dir, "nope"))
		_, err := f.runtimeWith(name, project.RuntimeConfig{}, opts).Path()
		if !errors.Is(err, runtimes.ErrNotFound) || !strings.Contains(err.Error(), pin) {
			t.Fatalf("bad pin: %v", err)
		}
	}
	// Getenv, when given, is where pins and PATH come from.
	opts := f.options()
	opts.Getenv = func(k string) string {
		if k == "AGENTKIT_CODEX_CLI" {
			return fake
		}
		return ""
	}
	if p, err := f.runtimeWith("codex", project.RuntimeConfig{}, opts).Path(); err != nil || p != fake {
		t.Fatalf("Getenv pin: %q %v", p, err)
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t)
	opts := f.options()
	opts.Env = []string{"PATH=" + f.dir}
	rt := f.runtimeWith("claude", project.RuntimeConfig{}, opts)
	_, err := rt.Path()
	if !errors.Is(err, runtimes.ErrNotFound) || !strings.Contains(err.Error(), "AGENTKIT_CLAUDE_CLI") {
		t.Fatalf("Path: %v", err)
	}
	if _, err := rt.Run(context.Background(), runtimes.Request{Dir: f.work}); !errors.Is(err, runtimes.ErrNotFound) {
		t.Fatalf("Run: %v", err)
	}
	if _, err := rt.Version(context.Background()); !errors.Is(err, runtimes.ErrNotFound) {
		t.Fatalf("Version: %v", err)
	}
	// A relative PATH entry is never searched: the directory under work could plant a "claude".
	opts.Env = []string{"PATH=."}
	if _, err := f.runtimeWith("claude", project.RuntimeConfig{}, opts).Path(); !errors.Is(err, runtimes.ErrNotFound) {
		t.Fatalf("relative PATH entry searched: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := runtimes.New("gemini", project.RuntimeConfig{}, runtimes.Options{}); err == nil || !strings.Contains(err.Error(), "claude, codex, opencode, command") {
		t.Fatalf("unknown runtime: %v", err)
	}
	if _, err := runtimes.New("command", project.RuntimeConfig{}, runtimes.Options{}); err == nil || !strings.Contains(err.Error(), "runtimes.command.argv") {
		t.Fatalf("command without argv: %v", err)
	}
	if _, err := runtimes.New("claude", project.RuntimeConfig{MaxSessions: -1}, runtimes.Options{}); err == nil {
		t.Fatal("negative max_sessions accepted")
	}
	// The command runtime does not run its program to ask for a version.
	f := newFixture(t)
	f.scriptText("@exit 9")
	rt := f.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}})
	if v, err := rt.Version(context.Background()); v != "" || err != nil {
		t.Fatalf("command Version = %q, %v", v, err)
	}
	if p, err := rt.Path(); err != nil || p != filepath.Join(binDir, exe("fakecli")) {
		t.Fatalf("command Path = %q, %v", p, err)
	}
	if len(f.calls()) != 0 {
		t.Fatal("Version ran the command")
	}
}
