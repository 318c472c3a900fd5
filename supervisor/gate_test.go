package supervisor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/supervisor"
)

// gitRepo makes a repository with one committed file.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "a.txt"}, {"commit", "-q", "-m", "a"}} {
		if args[0] == "add" {
			must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

func TestGatePassesAndFails(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t)
	ctx := context.Background()
	res := supervisor.RunGate(ctx, dir, "fast", []string{"echo one", "echo two >&2"}, time.Minute, os.Environ())
	if !res.Passed || res.ExitCode != 0 || !strings.Contains(res.Output, "$ echo one\none\n$ echo two >&2\ntwo\n") {
		t.Fatalf("%+v", res)
	}
	res = supervisor.RunGate(ctx, dir, "fast", []string{"true", "echo broken; exit 3", "echo never"}, time.Minute, os.Environ())
	if res.Passed || res.ExitCode != 3 || res.Command != "echo broken; exit 3" || strings.Contains(res.Output, "never") {
		t.Fatalf("%+v", res)
	}
	if s := res.Summary(); s != "gate fast failed (exit status 3): echo broken; exit 3" {
		t.Errorf("summary %q", s)
	}
	// Untracked build output is allowed.
	res = supervisor.RunGate(ctx, dir, "fast", []string{"echo out > build.log"}, time.Minute, os.Environ())
	if !res.Passed {
		t.Errorf("untracked output failed the gate: %+v", res)
	}
}

func TestGateThatChangesCommittedFilesFails(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t)
	res := supervisor.RunGate(context.Background(), dir, "fast", []string{"echo changed > a.txt"}, time.Minute, os.Environ())
	if res.Passed || len(res.Changed) != 1 || res.Changed[0] != "a.txt" || !strings.Contains(res.Summary(), "changed committed files: a.txt") {
		t.Fatalf("%+v", res)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "a\n" {
		t.Errorf("the change was not undone: %q", data)
	}
}

func TestGateTimesOutWith124(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t)
	start := time.Now()
	// The child keeps the output pipe open: the whole group must be killed.
	res := supervisor.RunGate(context.Background(), dir, "slow", []string{"sleep 30 & sleep 30"}, 300*time.Millisecond, os.Environ())
	if res.Passed || res.ExitCode != supervisor.TimeoutExit || !strings.Contains(res.Output, "time limit") {
		t.Fatalf("%+v", res)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the timed-out gate took %s to return", d)
	}
}

func TestGateKeepsOutputTail(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t)
	res := supervisor.RunGate(context.Background(), dir, "fast", []string{"i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; exit 1"}, time.Minute, os.Environ())
	if len(res.Output) > supervisor.GateTailChars || !strings.HasSuffix(res.Output, "line 1999\n") || strings.Contains(res.Output, "line 10\n") {
		t.Fatalf("tail of %d chars: %q...", len(res.Output), res.Output[:80])
	}
	if !strings.HasPrefix(res.Output, "line ") {
		t.Errorf("the tail does not start at a line: %q", res.Output[:20])
	}
}
