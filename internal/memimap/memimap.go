// Package memimap closes a gap of go-imap's in-memory IMAP server, which the demo and the tests serve mail with.
package memimap

import (
	"time"

	"github.com/emersion/go-imap/v2/imapserver"
)

// Repoll is how often an idling session looks for changes it was not told of.
const Repoll = 50 * time.Millisecond

// PromptSession wraps a session of imapmemserver: a message appended just
// before IDLE starts is reported by that server only with the next change,
// while real servers report it at once. While idling, this session looks
// again every Repoll.
type PromptSession struct {
	imapserver.Session
}

// Idle reports changes as a real server would, until stop is closed.
func (s *PromptSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	for {
		if err := s.Session.Poll(w, true); err != nil {
			return err
		}
		inner := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- s.Session.Idle(w, inner) }()
		select {
		case <-stop:
			close(inner)
			return <-done
		case err := <-done:
			return err
		case <-time.After(Repoll):
			close(inner)
			if err := <-done; err != nil {
				return err
			}
		}
	}
}
