// Package runtimes runs coding-agent CLIs (Claude Code, Codex, OpenCode or any command) as supervised sessions and classifies how they ended.
package runtimes

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentkit/agentkit/internal/project"
)

// Role says what a session may do.
type Role string

const (
	// RoleWriter may edit files in its directory (builders).
	RoleWriter Role = "writer"
	// RoleReadOnly may only read (reviewer, coordinator): Claude gets
	// --tools Read,Grep,Glob, Codex runs in its read-only sandbox.
	RoleReadOnly Role = "readonly"
)

// Class is a failure class; "" means success.
type Class string

// The failure classes of RUNTIMES.md.
const (
	ClassNone             Class = ""
	ClassUsageLimit       Class = "usage_limit"
	ClassRateLimit        Class = "rate_limit"
	ClassProviderOutage   Class = "provider_outage"
	ClassAuth             Class = "auth"
	ClassModelUnavailable Class = "model_unavailable"
	ClassCrash            Class = "crash"
	ClassTimeout          Class = "timeout"
)

// Request is one session to start or resume.
type Request struct {
	Dir        string        // working directory
	Prompt     string        // written to stdin, never argv
	Model      string        // "" = the runtime's configured model
	Effort     string        // "" = the runtime's configured effort
	Role       Role          // "" = RoleWriter
	Resume     string        // session id to resume; "" starts a new session
	Session    string        // command runtime only: the agentkit-made id passed as AGENTKIT_SESSION (on resume, Resume==Session)
	Env        []string      // extra KEY=VALUE added to the filtered parent env (AGENTKIT_TASK, AGENTKIT_JOB, AGENTKIT_ROOT, AGENTKIT_ROLE, AGENTKIT_MODEL, AGENTKIT_SESSION)
	Timeout    time.Duration // 0 = no limit
	EventsPath string        // where events.jsonl goes ({"at","channel","text"} per line, redacted); "" = none
	MaxTurns   int           // 0 = the runtime's configured max_turns (Claude only)
}

// Usage counts tokens. Input counts every input token, cached ones included;
// Cached is the part of Input that was read from the provider's cache.
type Usage struct{ Input, Output, Cached int64 }

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Output: u.Output + v.Output, Cached: u.Cached + v.Cached}
}

// Outcome is what a finished session reports.
type Outcome struct {
	ExitCode  int    // the process's exit status; -1 when it was killed by a signal
	SessionID string // the id that resumes this session
	FinalText string // the agent's final answer (command runtime: stdout's last lines), redacted
	Usage     Usage
	CostUSD   float64 // 0 when the CLI does not report it
	Class     Class
	ResetAt   time.Time // zero when unknown
	Message   string    // the line that decided the class, redacted
	Duration  time.Duration
	// Cancelled is true when the session was stopped from outside (its
	// context was cancelled); Class is then ClassCrash, or ClassTimeout when
	// the context's deadline passed.
	Cancelled bool
}

// Runtime is one coding-agent CLI adapter.
type Runtime interface {
	// Name is the adapter's name: claude, codex, opencode or command.
	Name() string
	// Run runs one session to its end. The error is non-nil only when the
	// session could not be started; cancelling ctx stops the whole process group.
	Run(ctx context.Context, req Request) (Outcome, error)
	// Version asks the CLI for its version (--version).
	Version(ctx context.Context) (string, error)
	// Path finds the CLI: its env pin (AGENTKIT_CLAUDE_CLI ...) or PATH.
	Path() (string, error)
}

// Options are shared by every adapter.
type Options struct {
	Env      []string            // the parent environment to filter (default os.Environ())
	Getenv   func(string) string // for binary pins and PATH lookups (default: looks in Env)
	AllowEnv []string            // secret-looking names the project allows its agents to see
	Secrets  []string            // extra secret values to redact (e.g. the phone password)
	Grace    time.Duration       // SIGTERM -> SIGKILL grace, default 10s
	Drain    time.Duration       // how long output may still flow once the process group is gone, default 2s
	Now      func() time.Time    // default time.Now
	Location *time.Location      // zone for reset times given without one, default time.Local
}

// Defaults for Options.
const (
	DefaultGrace = 10 * time.Second
	DefaultDrain = 2 * time.Second
)

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Getenv == nil {
		env := o.Env
		o.Getenv = func(name string) string { return lookupEnv(env, name) }
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Drain <= 0 {
		o.Drain = DefaultDrain
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	return o
}

// Names lists the adapters New knows, in the order `agentkit runtimes` shows them.
var Names = []string{"claude", "codex", "opencode", "command"}

// New returns the named adapter ("claude", "codex", "opencode", "command").
// Adapters made with the same name and configuration share one max_sessions
// limit across the process.
func New(name string, cfg project.RuntimeConfig, opts Options) (Runtime, error) {
	var d dialect
	switch name {
	case "claude":
		d = claudeDialect{}
	case "codex":
		d = codexDialect{}
	case "opencode":
		d = opencodeDialect{}
	case "command":
		if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
			return nil, fmt.Errorf("runtime command: runtimes.command.argv is empty in .ai/project.yaml; set it to the program to run, e.g. [\"./scripts/builder.sh\"]")
		}
		d = commandDialect{argv: append([]string(nil), cfg.Argv...)}
	default:
		return nil, fmt.Errorf("unknown runtime %q; use one of claude, codex, opencode, command", name)
	}
	if cfg.MaxSessions < 0 {
		return nil, fmt.Errorf("runtime %s: max_sessions is %d; use 0 (no cap) or more", name, cfg.MaxSessions)
	}
	return newAdapter(name, d, cfg, opts.withDefaults()), nil
}
