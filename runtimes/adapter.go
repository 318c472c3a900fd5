package runtimes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/internal/redact"
)

// dialect is what differs between CLIs: where the binary is, its command
// line, and how its output reads.
type dialect interface {
	// binary is the CLI's name on PATH, or the command runtime's argv[0].
	binary() string
	// pin is the environment variable that names the binary, "" for none.
	pin() string
	// args is the command line after the binary, for a request whose
	// defaults are already filled in.
	args(req Request) []string
	newStream() stream
}

// adapter runs sessions of one CLI; it implements Runtime.
type adapter struct {
	name  string
	d     dialect
	cfg   project.RuntimeConfig
	opts  Options
	slots *slots
	red   *redact.Redactor
	after func(time.Duration) (<-chan time.Time, func() bool)
}

var _ Runtime = (*adapter)(nil)

func newAdapter(name string, d dialect, cfg project.RuntimeConfig, opts Options) *adapter {
	return &adapter{
		name:  name,
		d:     d,
		cfg:   cfg,
		opts:  opts,
		slots: sharedSlots(name, cfg),
		red:   redact.FromEnv(opts.Env, opts.Secrets...),
		after: realAfter,
	}
}

func (a *adapter) Name() string { return a.name }

// Path finds the CLI: its env pin, else PATH. For the command runtime, a
// relative argv[0] with a slash is checked against the current directory.
func (a *adapter) Path() (string, error) {
	return findBinary(a.d.binary(), a.d.pin(), a.opts.Getenv)
}

// Version runs the CLI with --version and returns the first line it prints.
// The command runtime's program is not run: it may not know --version, and
// running a builder script to ask would do its work.
func (a *adapter) Version(ctx context.Context) (string, error) {
	if a.name == "command" {
		return "", nil
	}
	path, err := a.Path()
	if err != nil {
		return "", err
	}
	var (
		mu    sync.Mutex // lines may still arrive after a bounded drain
		lines []string
	)
	res, err := runProc(ctx, procSpec{
		path:    path,
		args:    []string{"--version"},
		env:     ChildEnv(a.opts.Env, a.opts.AllowEnv, nil),
		timeout: 30 * time.Second,
		grace:   time.Second,
		drain:   time.Second,
		onLine: func(ch, l string) {
			if ch == ChannelStdout && strings.TrimSpace(l) != "" {
				mu.Lock()
				lines = append(lines, strings.TrimSpace(l))
				mu.Unlock()
			}
		},
		note:  func(string) {},
		after: realAfter,
	})
	if err != nil {
		return "", fmt.Errorf("asking %s for its version: %w", a.name, err)
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case res.cancelled:
		return "", fmt.Errorf("asking %s for its version: %w", a.name, ctx.Err())
	case res.timedOut:
		return "", fmt.Errorf("%s --version did not answer within 30s", path)
	case res.exitCode != 0:
		return "", fmt.Errorf("%s --version failed with exit status %d", path, res.exitCode)
	case len(lines) == 0:
		return "", fmt.Errorf("%s --version printed nothing", path)
	}
	return a.red.String(lines[0]), nil
}

// Run runs one session; see Runtime.
func (a *adapter) Run(ctx context.Context, req Request) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, fmt.Errorf("runtime %s: session not started: %w", a.name, err)
	}
	if req.Role != "" && req.Role != RoleWriter && req.Role != RoleReadOnly {
		return Outcome{}, fmt.Errorf("runtime %s: role %q is neither %q nor %q", a.name, req.Role, RoleWriter, RoleReadOnly)
	}
	if err := a.slots.acquire(ctx); err != nil {
		return Outcome{}, fmt.Errorf("runtime %s: waiting for a free session (max_sessions %d): %w", a.name, a.cfg.MaxSessions, err)
	}
	defer a.slots.release()

	req = a.fill(req)
	path, err := a.binaryFor()
	if err != nil {
		return Outcome{}, fmt.Errorf("runtime %s: %w", a.name, err)
	}
	args := a.d.args(req)
	red := a.red
	if extra := redact.SecretValues(req.Env); len(extra) > 0 {
		red = red.With(extra...)
	}
	events, err := openEvents(req.EventsPath)
	if err != nil {
		return Outcome{}, fmt.Errorf("runtime %s: %w; check that the repository's .ai/runtime folder is writable", a.name, err)
	}
	sess := newSession(a.d.newStream(), red, events, a.opts.Now)
	sess.note(fmt.Sprintf("start: %s %s", a.name, strings.Join(args, " ")))
	res, err := runProc(ctx, procSpec{
		path:    path,
		args:    args,
		dir:     req.Dir,
		env:     ChildEnv(a.opts.Env, a.opts.AllowEnv, a.childExtra(req)),
		stdin:   req.Prompt,
		timeout: req.Timeout,
		grace:   a.opts.Grace,
		drain:   a.opts.Drain,
		onLine:  sess.line,
		note:    sess.note,
		after:   a.after,
	})
	if err != nil {
		sess.note("could not start: " + err.Error())
		_ = sess.close()
		dir := req.Dir
		if dir == "" {
			dir = "the working directory"
		}
		return Outcome{}, fmt.Errorf("runtime %s: %w; check that %s is an executable and that %s exists", a.name, err, path, dir)
	}
	out := a.outcome(req, res, sess)
	sess.note(fmt.Sprintf("end: exit status %d after %s, class %q", out.ExitCode, out.Duration.Round(time.Millisecond), out.Class))
	_ = sess.close() // the events log is best effort: the outcome stands without it
	return out, nil
}

// fill puts the runtime's configured defaults into the blank fields of req.
func (a *adapter) fill(req Request) Request {
	if req.Model == "" {
		req.Model = a.cfg.Model
	}
	if req.Effort == "" {
		req.Effort = a.cfg.Effort
	}
	if req.Role == "" {
		req.Role = RoleWriter
	}
	if req.Dir != "" {
		// Codex gets the directory in its argv (--cd): make it mean the same
		// thing whatever the child's working directory.
		if abs, err := filepath.Abs(req.Dir); err == nil {
			req.Dir = abs
		}
	}
	if req.MaxTurns == 0 {
		req.MaxTurns = a.cfg.MaxTurns
	}
	if a.name == "command" {
		if req.Session == "" {
			req.Session = req.Resume
		}
		if req.Session == "" {
			req.Session = newSessionID()
		}
	}
	return req
}

// binaryFor returns the executable to start. A command runtime's relative
// argv[0] with a slash is left for the OS to resolve in the session's directory.
func (a *adapter) binaryFor() (string, error) {
	if cd, ok := a.d.(commandDialect); ok && isRelativePath(cd.argv[0]) {
		return cd.argv[0], nil
	}
	return a.Path()
}

// childExtra returns the AGENTKIT_* variables of a session; the request's own
// Env comes last and wins.
func (a *adapter) childExtra(req Request) []string {
	extra := []string{EnvRole + "=" + string(req.Role)}
	if req.Model != "" {
		extra = append(extra, EnvModel+"="+req.Model)
	}
	if s := firstNonEmpty(req.Session, req.Resume); s != "" {
		extra = append(extra, EnvSession+"="+s)
	}
	return append(extra, req.Env...)
}

// newSessionID makes a command runtime session id.
func newSessionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ses-" + hex.EncodeToString(b[:])
}

// isRelativePath reports whether p names a file relative to a directory
// (./scripts/builder.sh), rather than a bare name looked up in PATH or an absolute path.
func isRelativePath(p string) bool {
	return strings.ContainsAny(p, `/\`) && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, `\`) && !(len(p) > 1 && p[1] == ':')
}
