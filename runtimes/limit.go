package runtimes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agentkit/agentkit/internal/project"
)

// slots caps the concurrent sessions of one runtime (max_sessions).
// A nil *slots has no cap.
type slots struct {
	ch      chan struct{}
	waiting atomic.Int32 // sessions waiting for a slot, for tests and status
}

// acquire waits for a free slot or for ctx to end.
func (s *slots) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil || s == nil {
		return err
	}
	select {
	case s.ch <- struct{}{}:
		return nil
	default:
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case s.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release frees a slot taken by acquire.
func (s *slots) release() {
	if s != nil {
		<-s.ch
	}
}

// registry holds one slots per runtime name and configuration, process-wide.
var registry = struct {
	sync.Mutex
	m map[string]*slots
}{m: make(map[string]*slots)}

// sharedSlots returns the process-wide slots of a runtime, nil when it has no cap.
func sharedSlots(name string, cfg project.RuntimeConfig) *slots {
	if cfg.MaxSessions <= 0 {
		return nil
	}
	key := fmt.Sprintf("%s\x00%q\x00%q\x00%d\x00%q\x00%d", name, cfg.Model, cfg.Effort, cfg.MaxSessions, cfg.Argv, cfg.MaxTurns)
	registry.Lock()
	defer registry.Unlock()
	s := registry.m[key]
	if s == nil {
		s = &slots{ch: make(chan struct{}, cfg.MaxSessions)}
		registry.m[key] = s
	}
	return s
}
