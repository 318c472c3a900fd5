// Package service hosts agentkit's long-running parts in one process, restarting any part that panics or fails without taking the others down.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Unit is one long-running part of the service, such as the mailbot or one
// repository's supervisor. Run returns when ctx is done.
type Unit struct {
	Name string
	Run  func(ctx context.Context) error
}

// Host runs units and restarts each one that panics or fails, with backoff.
type Host struct {
	// Log receives one record per failure and restart.
	Log *slog.Logger
	// MinBackoff and MaxBackoff bound the wait before a restart.
	MinBackoff, MaxBackoff time.Duration
	// After waits; tests inject their own.
	After func(time.Duration) <-chan time.Time

	mu      sync.Mutex
	running map[string]*hosted
	wg      sync.WaitGroup
}

type hosted struct {
	cancel   context.CancelFunc
	done     chan struct{} // closed when the unit has ended for good
	restarts int
	started  time.Time
	lastErr  string
}

// UnitState describes one hosted unit for status output.
type UnitState struct {
	Name     string    `json:"name"`
	Started  time.Time `json:"started"`
	Restarts int       `json:"restarts"`
	LastErr  string    `json:"last_error,omitempty"`
}

func (h *Host) init() {
	if h.running == nil {
		h.running = map[string]*hosted{}
	}
	if h.Log == nil {
		h.Log = slog.New(slog.DiscardHandler)
	}
	if h.MinBackoff == 0 {
		h.MinBackoff = time.Second
	}
	if h.MaxBackoff == 0 {
		h.MaxBackoff = time.Minute
	}
	if h.After == nil {
		h.After = time.After
	}
}

// Start runs u until ctx is done or Stop(u.Name) is called. Starting a name
// that already runs does nothing and returns false.
func (h *Host) Start(ctx context.Context, u Unit) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	if _, ok := h.running[u.Name]; ok {
		return false
	}
	h.startLocked(ctx, u)
	return true
}

func (h *Host) startLocked(ctx context.Context, u Unit) {
	uctx, cancel := context.WithCancel(ctx)
	st := &hosted{cancel: cancel, done: make(chan struct{}), started: time.Now()}
	h.running[u.Name] = st
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(st.done)
		h.keepRunning(uctx, u, st)
		h.mu.Lock()
		if h.running[u.Name] == st {
			delete(h.running, u.Name)
		}
		h.mu.Unlock()
	}()
}

// Restart stops the unit of the same name (waiting until it has ended) and
// starts u in its place; with none running it just starts u. It returns
// false without starting u when ctx ends first.
func (h *Host) Restart(ctx context.Context, u Unit) bool {
	for {
		h.mu.Lock()
		h.init()
		st, ok := h.running[u.Name]
		if !ok {
			h.startLocked(ctx, u)
			h.mu.Unlock()
			return true
		}
		st.cancel()
		h.mu.Unlock()
		select {
		case <-st.done:
		case <-ctx.Done():
			return false
		}
	}
}

// Stop cancels the named unit; Wait returns once it has ended.
func (h *Host) Stop(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st, ok := h.running[name]; ok {
		st.cancel()
	}
}

// Wait blocks until every unit has ended.
func (h *Host) Wait() { h.wg.Wait() }

// Units lists the running units.
func (h *Host) Units() []UnitState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]UnitState, 0, len(h.running))
	for name, st := range h.running {
		out = append(out, UnitState{Name: name, Started: st.started, Restarts: st.restarts, LastErr: st.lastErr})
	}
	return out
}

// Running reports whether the named unit is hosted now.
func (h *Host) Running(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.running[name]
	return ok
}

// ErrPanic wraps a recovered panic.
var ErrPanic = errors.New("panic")

func (h *Host) keepRunning(ctx context.Context, u Unit, st *hosted) {
	backoff := h.MinBackoff
	for {
		err := runOnce(ctx, u)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			// A unit that ends by itself is done (a supervisor whose jobs finished).
			h.Log.Info("unit finished", "unit", u.Name)
			return
		}
		h.mu.Lock()
		st.restarts++
		st.lastErr = err.Error()
		h.mu.Unlock()
		h.Log.Error("unit failed; restarting", "unit", u.Name, "err", err, "in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-h.After(backoff):
		}
		backoff = min(backoff*2, h.MaxBackoff)
	}
}

func runOnce(ctx context.Context, u Unit) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w in %s: %v\n%s", ErrPanic, u.Name, r, debug.Stack())
		}
	}()
	return u.Run(ctx)
}
