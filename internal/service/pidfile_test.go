package service

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/filelock"
)

func TestAcquire(t *testing.T) {
	f := Files{Home: t.TempDir()}
	if up, _ := f.Running(); up {
		t.Fatal("running before start")
	}
	l, err := f.Acquire(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	up, info := f.Running()
	if !up || info.PID != os.Getpid() {
		t.Fatalf("%v %+v", up, info)
	}
	if _, err := f.Acquire(time.Now()); !errors.Is(err, ErrRunning) {
		t.Fatalf("second acquire: %v", err)
	}
	l.Unlock()
	if up, _ := f.Running(); up {
		t.Fatal("running after release")
	}
}

func TestStopRequest(t *testing.T) {
	f := Files{Home: t.TempDir()}
	if _, ok := f.TakeStopRequest(); ok {
		t.Fatal("a stop request without one written")
	}
	if err := f.RequestStop(90*time.Second, time.Now()); err != nil {
		t.Fatal(err)
	}
	if g, ok := f.TakeStopRequest(); !ok || g != 90*time.Second {
		t.Fatalf("%v %v", g, ok)
	}
	if _, ok := f.TakeStopRequest(); ok {
		t.Fatal("a stop request was taken twice")
	}
	if err := os.WriteFile(f.StopRequest(), []byte(`{"grace": "soon"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.TakeStopRequest(); ok {
		t.Fatal("a bad grace was taken")
	}
}

// A status probe holds the lock for an instant; a service starting then must
// wait for it, not report that a service already runs.
func TestAcquireWaitsOutAProbe(t *testing.T) {
	f := Files{Home: t.TempDir()}
	probe, err := filelock.TryLock(f.Lock())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := f.Acquire(time.Now())
		if err == nil {
			l.Unlock()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // the probe outlasts Acquire's first try
	probe.Unlock()
	if err := <-got; err != nil {
		t.Fatalf("Acquire gave up on a probe: %v", err)
	}
}
