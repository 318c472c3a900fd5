package runtimes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// TestMaxSessions: with max_sessions 1, a second session (even through
// another adapter made by New with the same configuration) waits until the
// first ends, and a waiting session gives up when its context ends.
func TestMaxSessions(t *testing.T) {
	f := newFixture(t)
	// A configuration no other test uses, so the process-wide slots start empty.
	cfg := project.RuntimeConfig{Argv: []string{"fakecli", "max-sessions-test"}, MaxSessions: 1}
	rt1 := f.runtime("command", cfg)
	rt2 := f.runtime("command", cfg)
	if !runtimes.SameSlots(rt1, rt2) {
		t.Fatal("two adapters of one runtime configuration do not share their limit")
	}
	other := f.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli", "other"}, MaxSessions: 1})
	if runtimes.SameSlots(rt1, other) {
		t.Fatal("different configurations share a limit")
	}

	aPid, bPid, release := f.path("a.pid"), f.path("b.pid"), f.path("release")
	scriptA := f.writeScript("a.txt", "@pidfile "+aPid, "@waitfile "+release, "a done")
	scriptB := f.writeScript("b.txt", "@pidfile "+bPid, "b done")

	type result struct {
		out runtimes.Outcome
		err error
	}
	runA, runB := make(chan result, 1), make(chan result, 1)
	go func() {
		out, err := rt1.Run(context.Background(), runtimes.Request{Dir: f.work, Session: "a", Env: []string{"FAKECLI_SCRIPT=" + scriptA}})
		runA <- result{out, err}
	}()
	waitFor(t, "session a to start", func() bool { return fileExists(aPid) })
	go func() {
		out, err := rt2.Run(context.Background(), runtimes.Request{Dir: f.work, Session: "b", Env: []string{"FAKECLI_SCRIPT=" + scriptB}})
		runB <- result{out, err}
	}()
	waitFor(t, "session b to wait for a slot", func() bool { return runtimes.SlotsWaiting(rt1) == 1 })
	if fileExists(bPid) {
		t.Fatal("session b started while a held the only slot")
	}

	// A third session that gives up while waiting never starts.
	ctx, cancel := context.WithCancel(context.Background())
	runC := make(chan error, 1)
	go func() {
		_, err := rt1.Run(ctx, runtimes.Request{Dir: f.work, Session: "c"})
		runC <- err
	}()
	waitFor(t, "session c to wait", func() bool { return runtimes.SlotsWaiting(rt1) == 2 })
	cancel()
	if err := <-runC; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait returned %v", err)
	}

	if err := writeFile(release, ""); err != nil {
		t.Fatal(err)
	}
	a, b := <-runA, <-runB
	if a.err != nil || b.err != nil || a.out.FinalText != "a done" || b.out.FinalText != "b done" {
		t.Fatalf("a: %+v %v; b: %+v %v", a.out, a.err, b.out, b.err)
	}
	if n := len(f.calls()); n != 2 {
		t.Fatalf("%d sessions ran, want 2 (the cancelled one must not run)", n)
	}
	if runtimes.SlotsWaiting(rt1) != 0 {
		t.Fatal("waiters left")
	}
}
