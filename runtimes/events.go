package runtimes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The channels of an events log line.
const (
	ChannelStdout = "stdout"
	ChannelStderr = "stderr"
	// ChannelAgentkit carries what agentkit itself did to the session (start, exit, timeout).
	ChannelAgentkit = "agentkit"
)

// Event is one line of an events.jsonl log.
type Event struct {
	At      time.Time `json:"at"`
	Channel string    `json:"channel"`
	Text    string    `json:"text"`
}

// eventLog appends redacted events to a file; a nil *eventLog drops them.
// It is not safe for concurrent use: the session serialises calls.
type eventLog struct {
	f   *os.File
	buf bytes.Buffer
	err error // the first write error; later writes are skipped
}

// openEvents opens (appending) the events log at path, making its folder; "" means no log.
func openEvents(path string) (*eventLog, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("making the events folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the events log: %w", err)
	}
	return &eventLog{f: f}, nil
}

// write appends one event; text must already be redacted.
func (l *eventLog) write(at time.Time, channel, text string) {
	if l == nil || l.err != nil {
		return
	}
	l.buf.Reset()
	enc := json.NewEncoder(&l.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Event{At: at.UTC(), Channel: channel, Text: text}); err != nil {
		l.err = err
		return
	}
	// One write per line, so a reader tailing the file never sees half a line
	// from two writers (O_APPEND).
	if _, err := l.f.Write(l.buf.Bytes()); err != nil {
		l.err = err
	}
}

// close closes the file and returns the first error met while writing.
func (l *eventLog) close() error {
	if l == nil {
		return nil
	}
	err := l.f.Close()
	if l.err != nil {
		return l.err
	}
	return err
}
