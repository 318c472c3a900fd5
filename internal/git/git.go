// Package git runs the git command line for agentkit: finding a repository, its author, and plumbing that the supervisor builds on.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Error is a failed git command with what it printed.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Run runs git with args in dir and returns its trimmed standard output.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("git is not installed or not on PATH; install git first")
		}
		return "", &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// TopLevel returns the root of the work tree that contains dir.
func TopLevel(ctx context.Context, dir string) (string, error) {
	out, err := Run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s is not inside a Git repository (run git init there, or cd into your repository): %w", dir, err)
	}
	return out, nil
}

// HasCommit reports whether the repository has at least one commit.
func HasCommit(ctx context.Context, dir string) bool {
	_, err := Run(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	return err == nil
}

// Author returns the configured user.name and user.email, or an error saying
// how to set them.
func Author(ctx context.Context, dir string) (name, email string, err error) {
	name, _ = Run(ctx, dir, "config", "user.name")
	email, _ = Run(ctx, dir, "config", "user.email")
	if strings.TrimSpace(name) == "" || strings.TrimSpace(email) == "" {
		return "", "", errors.New(`no Git author is configured, and agentkit commits its agents' work: run git config --global user.name "Your Name" and git config --global user.email you@example.com`)
	}
	return name, email, nil
}
