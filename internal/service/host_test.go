package service

import (
	"context"
	"errors"
	"sync"
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

func TestRestartWaitsForTheOldRun(t *testing.T) {
	h := &Host{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var live, maxLive atomic.Int32
	var gens []int32
	var mu sync.Mutex
	unit := func(gen int32) Unit {
		return Unit{Name: "bot", Run: func(ctx context.Context) error {
			n := live.Add(1)
			for {
				m := maxLive.Load()
				if n <= m || maxLive.CompareAndSwap(m, n) {
					break
				}
			}
			mu.Lock()
			gens = append(gens, gen)
			mu.Unlock()
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // a slow shutdown must still not overlap the next run
			live.Add(-1)
			return nil
		}}
	}
	if !h.Restart(ctx, unit(1)) {
		t.Fatal("restart without a running unit did not start it")
	}
	waitFor(t, func() bool { return live.Load() == 1 })
	if !h.Restart(ctx, unit(2)) || !h.Restart(ctx, unit(3)) {
		t.Fatal("restart refused")
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(gens) == 3
	})
	if maxLive.Load() != 1 {
		t.Fatalf("%d runs of one unit overlapped", maxLive.Load())
	}
	mu.Lock()
	if gens[0] != 1 || gens[1] != 2 || gens[2] != 3 {
		t.Fatalf("runs in order %v", gens)
	}
	mu.Unlock()
	if u := h.Units(); len(u) != 1 || u[0].Restarts != 0 {
		t.Fatalf("units %+v", u)
	}
	cancel()
	h.Wait()
}
