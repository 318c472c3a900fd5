package runtimes

import (
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/redact"
)

// stream reads one CLI's stdout events and gathers what the outcome needs.
type stream interface {
	// line takes one stdout line; it reports false when the line is not one
	// of the CLI's events (plain text, kept for classification).
	line(text string) bool
	result() streamResult
}

// streamResult is what a CLI's events said about its session.
type streamResult struct {
	sessionID string
	finalText string
	errorText string // the CLI's own error messages, one a line
	usage     Usage
	cost      float64
	failed    bool      // an event said the session failed (is_error, turn.failed, error)
	resetAt   time.Time // a structured reset time (Claude's rate_limit_event)
}

// Tail sizes: stdout's plain lines (the command runtime's final text) and stderr.
const (
	stdoutTailBytes = 64 << 10
	stderrTailBytes = 16 << 10
)

// session routes a running process's lines to the events log, the CLI's
// stream parser and the tails, and stops taking lines once closed (output
// that outlives the bounded drain is dropped).
type session struct {
	mu     sync.Mutex
	closed bool
	red    *redact.Redactor
	events *eventLog
	stream stream
	plain  *tail // stdout lines that are not CLI events, redacted
	stderr *tail // redacted
	now    func() time.Time
}

func newSession(st stream, red *redact.Redactor, events *eventLog, now func() time.Time) *session {
	return &session{
		red:    red,
		events: events,
		stream: st,
		plain:  newTail(stdoutTailBytes),
		stderr: newTail(stderrTailBytes),
		now:    now,
	}
}

// line takes one output line of the process.
func (s *session) line(channel, text string) {
	red := s.red.String(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.events.write(s.now(), channel, red)
	switch channel {
	case ChannelStdout:
		if !s.stream.line(text) {
			s.plain.add(red)
		}
	case ChannelStderr:
		s.stderr.add(red)
	}
}

// note logs what agentkit did to the session.
func (s *session) note(text string) {
	red := s.red.String(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.events.write(s.now(), ChannelAgentkit, red)
	}
}

// close stops taking lines and closes the events log.
func (s *session) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.events.close()
}

// snapshot returns what was gathered so far, safely against late lines.
func (s *session) snapshot() (res streamResult, plain, stderr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stream.result(), s.plain.String(), s.stderr.String()
}
