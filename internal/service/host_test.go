package service

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// instantAfter fires at once, so restart backoff costs no time in tests.
func instantAfter(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached before the deadline")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPanicRestartsOnlyThatUnit(t *testing.T) {
	h := &Host{After: instantAfter}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var panics, steadyRuns atomic.Int32
	h.Start(ctx, Unit{Name: "flaky", Run: func(ctx context.Context) error {
		if panics.Add(1) <= 3 {
			panic("boom")
		}
		<-ctx.Done()
		return nil
	}})
	h.Start(ctx, Unit{Name: "steady", Run: func(ctx context.Context) error {
		steadyRuns.Add(1)
		<-ctx.Done()
		return nil
	}})
	waitFor(t, func() bool { return panics.Load() >= 4 })
	if steadyRuns.Load() != 1 {
		t.Fatalf("the steady unit ran %d times", steadyRuns.Load())
	}
	var flaky UnitState
	for _, u := range h.Units() {
		if u.Name == "flaky" {
			flaky = u
		}
	}
	if flaky.Restarts != 3 || flaky.LastErr == "" {
		t.Fatalf("%+v", flaky)
	}
	cancel()
	h.Wait()
	if len(h.Units()) != 0 {
		t.Fatal("units left after Wait")
	}
}

func TestErrorRestartsAndFinishedUnitLeaves(t *testing.T) {
	h := &Host{After: instantAfter}
	ctx := context.Background()
	var runs atomic.Int32
	h.Start(ctx, Unit{Name: "job", Run: func(ctx context.Context) error {
		if runs.Add(1) < 3 {
			return errors.New("transient")
		}
		return nil
	}})
	h.Wait()
	if runs.Load() != 3 || h.Running("job") {
		t.Fatalf("runs %d running %v", runs.Load(), h.Running("job"))
	}
	if !h.Start(ctx, Unit{Name: "job", Run: func(context.Context) error { return nil }}) {
		t.Fatal("a finished unit's name could not be started again")
	}
	h.Wait()
}

func TestStartTwiceAndStop(t *testing.T) {
	h := &Host{}
	ctx := context.Background()
	block := func(ctx context.Context) error { <-ctx.Done(); return nil }
	if !h.Start(ctx, Unit{Name: "a", Run: block}) || h.Start(ctx, Unit{Name: "a", Run: block}) {
		t.Fatal("second start of a running unit was not refused")
	}
	h.Stop("a")
	h.Wait()
	if h.Running("a") {
		t.Fatal("stopped unit still running")
	}
}
