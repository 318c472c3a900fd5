package runtimes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// procSpec is one process to run in its own process group.
type procSpec struct {
	path    string
	args    []string // after argv[0]
	dir     string
	env     []string
	stdin   string
	timeout time.Duration // 0 = none
	grace   time.Duration // SIGTERM -> SIGKILL
	drain   time.Duration // output still read once the group is gone
	onLine  func(channel, text string)
	note    func(text string)                                   // what agentkit did, for the events log
	after   func(time.Duration) (<-chan time.Time, func() bool) // the time-limit timer
}

// procResult is how a process ended.
type procResult struct {
	exitCode  int
	timedOut  bool // the time limit (or ctx's deadline) stopped it
	cancelled bool // ctx stopped it
	start     time.Time
	end       time.Time
}

// groupGonePoll is how often the end of a process group is checked while waiting for it.
const groupGonePoll = 10 * time.Millisecond

// runProc starts the process, feeds it stdin, streams its output lines to
// onLine, and waits for it and every process of its group to end. The error
// is non-nil only when the process could not be started.
func runProc(ctx context.Context, s procSpec) (procResult, error) {
	var pipes []*os.File
	closeAll := func() {
		for _, f := range pipes {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			pipes = append(pipes, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return procResult{}, fmt.Errorf("making the stdin pipe: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return procResult{}, fmt.Errorf("making the stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return procResult{}, fmt.Errorf("making the stderr pipe: %w", err)
	}

	cmd := &exec.Cmd{
		Path:   s.path,
		Args:   append([]string{s.path}, s.args...),
		Dir:    s.dir,
		Env:    s.env,
		Stdin:  inR,
		Stdout: outW,
		Stderr: errW,
	}
	setGroupAttr(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		closeAll()
		return procResult{}, fmt.Errorf("starting %s: %w", s.path, err)
	}
	// The child has its copies; closing ours lets EOF arrive when it is done.
	inR.Close()
	outW.Close()
	errW.Close()
	grp := newGroup(cmd.Process)
	defer grp.close()

	var stdinOnce sync.Once
	closeStdin := func() { stdinOnce.Do(func() { inW.Close() }) }
	go func() {
		// A child that exits without reading makes this fail: that is its choice.
		_, _ = inW.WriteString(s.stdin)
		closeStdin()
	}()

	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); readLines(outR, func(l string) { s.onLine(ChannelStdout, l) }) }()
	go func() { defer readers.Done(); readLines(errR, func(l string) { s.onLine(ChannelStderr, l) }) }()

	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState below
		close(exited)
	}()

	var timeout <-chan time.Time
	if s.timeout > 0 {
		c, stop := s.after(s.timeout)
		defer stop()
		timeout = c
	}
	res := procResult{start: start}
	select {
	case <-exited:
	case <-timeout:
		res.timedOut = true
		s.note(fmt.Sprintf("time limit %s reached: stopping the process group", s.timeout))
	case <-ctx.Done():
		res.cancelled = true
		res.timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		s.note("cancelled: stopping the process group")
	}
	// Whether the leader ended by itself or is being stopped, no process of
	// its group may outlive the session.
	if res.timedOut || res.cancelled || grp.alive() {
		stopGroup(grp, exited, s.grace, s.note)
	}
	<-exited
	res.end = time.Now()
	res.exitCode = cmd.ProcessState.ExitCode()

	// Output is read until every writer is gone, but a process that left the
	// group (setsid, a daemon) may hold the pipes open: bound the wait.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	drainTimer := time.NewTimer(s.drain)
	select {
	case <-drained:
	case <-drainTimer.C:
		s.note(fmt.Sprintf("output still open %s after the session ended: closing it", s.drain))
	}
	drainTimer.Stop()
	closeStdin()
	outR.Close()
	errR.Close()
	return res, nil
}

// stopGroup asks the group to end (SIGTERM), kills it (SIGKILL) if any of it
// is left after grace, and returns once the leader has exited and the group
// is gone (or, after a kill, a short while has passed).
func stopGroup(g *group, exited <-chan struct{}, grace time.Duration, note func(string)) {
	_ = g.terminate()
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	if waitGone(g, exited, deadline.C) {
		return
	}
	note(fmt.Sprintf("process group still running %s after SIGTERM: killing it", grace))
	_ = g.kill()
	// SIGKILL cannot be ignored; the wait only covers the kernel's delay.
	after := time.NewTimer(5 * time.Second)
	defer after.Stop()
	<-exited
	waitGone(g, exited, after.C)
}

// waitGone waits until the leader has exited and no process of the group is
// left, or until stop fires; it reports whether the group is gone.
func waitGone(g *group, exited <-chan struct{}, stop <-chan time.Time) bool {
	select {
	case <-exited:
	case <-stop:
		return false
	}
	tick := time.NewTicker(groupGonePoll)
	defer tick.Stop()
	for g.alive() {
		select {
		case <-tick.C:
		case <-stop:
			return !g.alive()
		}
	}
	return true
}

// realAfter is the time-limit timer outside tests.
func realAfter(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
