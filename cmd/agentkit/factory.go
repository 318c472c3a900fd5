package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"golang.org/x/term"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// ioStreams carries the standard streams and the process's surroundings, so
// commands never touch os.Stdout or the real environment directly.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	Getwd  func() (string, error)
	Now    func() time.Time
}

func (ios *ioStreams) getenv(k string) string {
	if ios.Getenv == nil {
		return os.Getenv(k)
	}
	return ios.Getenv(k)
}

func (ios *ioStreams) now() time.Time {
	if ios.Now == nil {
		return time.Now()
	}
	return ios.Now()
}

func (ios *ioStreams) getwd() (string, error) {
	if ios.Getwd == nil {
		return os.Getwd()
	}
	return ios.Getwd()
}

// openDB opens the state store under AGENTKIT_HOME.
func (ios *ioStreams) openDB(ctx context.Context) (*state.DB, error) {
	return state.OpenHome(ctx, ios.getenv)
}

// openStore opens the problems store; close the returned DB when done.
func (ios *ioStreams) openStore(ctx context.Context) (*problems.Store, *state.DB, error) {
	db, err := ios.openDB(ctx)
	if err != nil {
		return nil, nil, err
	}
	s := problems.NewStore(db)
	s.Now = ios.now
	return s, db, nil
}

// who names the person at the terminal, for decisions and pauses.
func (ios *ioStreams) who() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := ios.getenv("USER"); u != "" {
		return u
	}
	return "terminal"
}

// writeJSON prints v as JSON: indented on a terminal, and on one line when
// piped to a program (as gh does), which for long listings is also several
// times faster.
func writeJSON(ios *ioStreams, v any) error {
	enc := json.NewEncoder(ios.Out)
	if f, ok := ios.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
