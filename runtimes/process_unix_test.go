//go:build unix

package runtimes_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// gone reports whether a process no longer runs: it does not exist, or it is
// a zombie (exited, waiting for a parent that may never reap it).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// checkGone fails unless pid stops running. Run returns only once the group
// is gone, so this holds at once; the deadline only absorbs a slow kernel.
func checkGone(t *testing.T, what string, pid int) {
	t.Helper()
	waitFor(t, what+" (pid "+strconv.Itoa(pid)+") to be gone", func() bool { return gone(pid) })
}

// killOnCleanup makes sure a test never leaves a process behind, whatever it asserts.
func killOnCleanup(t *testing.T, pidfile string) {
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(string(data)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// afterFile is a time-limit timer that fires once path exists, so a test
// reaches the limit exactly when the process tree is in place.
func afterFile(t *testing.T, path string) func(time.Duration) (<-chan time.Time, func() bool) {
	return func(time.Duration) (<-chan time.Time, func() bool) {
		c := make(chan time.Time, 1)
		stop := make(chan struct{})
		go func() {
			for !fileExists(path) {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			c <- time.Now()
		}()
		var stopped bool
		return c, func() bool {
			if !stopped {
				stopped = true
				close(stop)
			}
			return true
		}
	}
}

// TestTimeoutKillsTheWholeTree: the child starts a grandchild that ignores
// SIGTERM; at the time limit the group gets SIGTERM, then SIGKILL after the
// grace, and no process of the tree is left.
func TestTimeoutKillsTheWholeTree(t *testing.T) {
	for _, childIgnoresTerm := range []bool{false, true} {
		name := "child obeys SIGTERM"
		if childIgnoresTerm {
			name = "child ignores SIGTERM too"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			gcPid, childPid := f.path("grandchild.pid"), f.path("child.pid")
			killOnCleanup(t, gcPid)
			killOnCleanup(t, childPid)
			lines := []string{"@grandchild " + gcPid, "@waitfile " + gcPid, "@pidfile " + childPid, "working", "@hang"}
			if childIgnoresTerm {
				lines = append([]string{"@ignore-term"}, lines...)
			}
			f.scriptText(lines...)
			rt := f.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}})
			runtimes.SetAfter(rt, afterFile(t, childPid))
			events := f.path("events.jsonl")
			out, err := rt.Run(context.Background(), runtimes.Request{Dir: f.work, Timeout: time.Hour, EventsPath: events, Session: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Class != runtimes.ClassTimeout || out.Message != "time limit 1h0m0s reached" || out.Cancelled {
				t.Fatalf("outcome %+v", out)
			}
			checkGone(t, "grandchild", readPid(t, gcPid))
			checkGone(t, "child", readPid(t, childPid))
			var notes []string
			for _, ev := range readEvents(t, events) {
				if ev.Channel == runtimes.ChannelAgentkit {
					notes = append(notes, ev.Text)
				}
			}
			all := strings.Join(notes, "\n")
			if !strings.Contains(all, "time limit 1h0m0s reached: stopping the process group") || !strings.Contains(all, "killing it") {
				t.Fatalf("events log does not tell the timeout and the kill:\n%s", all)
			}
			if !strings.Contains(out.FinalText, "working") {
				t.Fatalf("output before the timeout lost: %q", out.FinalText)
			}
		})
	}
}

// TestRealTimeLimit: the real timer, with a child that never ends.
func TestRealTimeLimit(t *testing.T) {
	f := newFixture(t)
	f.scriptText("@hang")
	out, err := f.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}}).
		Run(context.Background(), runtimes.Request{Dir: f.work, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Class != runtimes.ClassTimeout || out.ExitCode != -1 {
		t.Fatalf("outcome %+v", out)
	}
}

// TestLeftoverGrandchildAfterExit: a child that exits 0 but leaves a process
// behind (holding its stdout) succeeds, and the leftover is killed.
func TestLeftoverGrandchildAfterExit(t *testing.T) {
	f := newFixture(t)
	gcPid := f.path("grandchild.pid")
	killOnCleanup(t, gcPid)
	f.scriptText("@grandchild "+gcPid, "@waitfile "+gcPid, "done")
	out := f.run("command", project.RuntimeConfig{Argv: []string{"fakecli"}}, runtimes.Request{Session: "s"})
	if out.Class != runtimes.ClassNone || out.ExitCode != 0 || !strings.Contains(out.FinalText, "done") {
		t.Fatalf("outcome %+v", out)
	}
	checkGone(t, "grandchild", readPid(t, gcPid))
}

// TestDrainIsBounded: a process that left the group (a new session, as a
// daemon does) keeps stdout open; the session still ends after the drain
// bound instead of hanging.
func TestDrainIsBounded(t *testing.T) {
	f := newFixture(t)
	dPid := f.path("daemon.pid")
	killOnCleanup(t, dPid)
	f.scriptText("@daemon "+dPid, "@waitfile "+dPid, "done")
	events := f.path("events.jsonl")
	out := f.run("command", project.RuntimeConfig{Argv: []string{"fakecli"}}, runtimes.Request{Session: "s", EventsPath: events})
	if out.Class != runtimes.ClassNone || !strings.Contains(out.FinalText, "done") {
		t.Fatalf("outcome %+v", out)
	}
	found := false
	for _, ev := range readEvents(t, events) {
		found = found || (ev.Channel == runtimes.ChannelAgentkit && strings.Contains(ev.Text, "output still open"))
	}
	if !found {
		t.Fatal("the events log does not say the output was cut")
	}
	if gone(readPid(t, dPid)) {
		t.Fatal("the daemon was expected to survive outside the group (the test kills it)")
	}
}

// TestCancel: cancelling the context stops the session and its tree.
func TestCancel(t *testing.T) {
	f := newFixture(t)
	childPid, gcPid := f.path("child.pid"), f.path("grandchild.pid")
	killOnCleanup(t, childPid)
	killOnCleanup(t, gcPid)
	f.scriptText("@grandchild "+gcPid, "@waitfile "+gcPid, "@pidfile "+childPid, "@hang")
	rt := f.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitFor(t, "the child", func() bool { return fileExists(childPid) })
		cancel()
	}()
	out, err := rt.Run(ctx, runtimes.Request{Dir: f.work, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cancelled || out.Class != runtimes.ClassCrash {
		t.Fatalf("outcome %+v", out)
	}
	checkGone(t, "child", readPid(t, childPid))
	checkGone(t, "grandchild", readPid(t, gcPid))

	// A context whose deadline passes is a timeout.
	f2 := newFixture(t)
	f2.scriptText("@hang")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	out, err = f2.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}}).Run(ctx2, runtimes.Request{Dir: f2.work})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cancelled || out.Class != runtimes.ClassTimeout {
		t.Fatalf("deadline outcome %+v", out)
	}
}
