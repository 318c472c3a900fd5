package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/git"
)

// GateTailChars is how much of a gate's output is kept (RUNTIMES.md).
const GateTailChars = 4000

// DefaultGateTimeout is a gate level's time limit when project.yaml sets none.
const DefaultGateTimeout = 30 * time.Minute

// TimeoutExit is the exit status a gate gets when it runs out of time.
const TimeoutExit = 124

// GateResult is how one gate level went.
type GateResult struct {
	Level    string
	Passed   bool
	ExitCode int
	// Command is the command that failed, "" when the gate passed.
	Command string
	// Output is the last GateTailChars characters of what the commands printed.
	Output string
	// Changed lists tracked files the gate changed; a gate that changes
	// committed files fails.
	Changed  []string
	Cached   bool
	Duration time.Duration
}

// Summary says in one line how the gate went.
func (g GateResult) Summary() string {
	switch {
	case g.Passed:
		return fmt.Sprintf("gate %s passed", g.Level)
	case len(g.Changed) > 0:
		return fmt.Sprintf("gate %s changed committed files: %s", g.Level, strings.Join(g.Changed, ", "))
	case g.ExitCode == TimeoutExit:
		return fmt.Sprintf("gate %s timed out: %s", g.Level, g.Command)
	}
	return fmt.Sprintf("gate %s failed (exit status %d): %s", g.Level, g.ExitCode, g.Command)
}

// RunGate runs a gate level's commands in dir, in order, each through the
// shell, stopping at the first failure. A command still running after
// timeout is killed with its process group and the gate fails with exit
// status 124. Afterwards tracked files must be as they were: changes fail the
// gate and are undone.
func RunGate(ctx context.Context, dir, level string, commands []string, timeout time.Duration, env []string) GateResult {
	start := time.Now()
	res := GateResult{Level: level, Passed: true}
	out := &tailBuffer{limit: GateTailChars}
	if timeout <= 0 {
		timeout = DefaultGateTimeout
	}
	deadline := start.Add(timeout)
	for _, c := range commands {
		fmt.Fprintf(out, "$ %s\n", c)
		code, err := runShell(ctx, dir, c, time.Until(deadline), env, out)
		if err != nil {
			fmt.Fprintf(out, "agentkit: %v\n", err)
		}
		if code != 0 {
			res.Passed, res.ExitCode, res.Command = false, code, c
			if code == TimeoutExit {
				fmt.Fprintf(out, "agentkit: the gate ran out of its %s time limit (gate_timeout in .ai/project.yaml)\n", timeout)
			}
			break
		}
	}
	if changed, err := git.ChangedTracked(ctx, dir); err == nil && len(changed) > 0 {
		res.Passed, res.Changed = false, changed
		if res.ExitCode == 0 {
			res.ExitCode = 1
		}
		fmt.Fprintf(out, "agentkit: the gate changed committed files (%s); gates must leave tracked files as they were\n", strings.Join(changed, ", "))
		_ = git.ResetHard(context.WithoutCancel(ctx), dir, "HEAD")
	}
	res.Output = out.String()
	res.Duration = time.Since(start)
	return res
}

// runShell runs one command through the shell in its own process group and
// returns its exit status (124 when it ran out of time).
func runShell(ctx context.Context, dir, command string, limit time.Duration, env []string, out *tailBuffer) (int, error) {
	if limit <= 0 {
		return TimeoutExit, nil
	}
	cmd := shellCommand(dir, command)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("starting %q: %w", command, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return exitCode(err), nil
	case <-timer.C:
		killGroup(cmd)
		<-done
		return TimeoutExit, nil
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return 130, ctx.Err()
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if c := ee.ExitCode(); c >= 0 {
			return c
		}
		return 128 + 9
	}
	return 1
}

// tailBuffer keeps the last limit bytes written to it, cut at a line start.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.limit {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.limit:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(b.buf)
	if len(s) > b.limit {
		s = s[len(s)-b.limit:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return s
}
