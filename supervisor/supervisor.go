// Package supervisor runs a repository's jobs: it plans them, builds each task in its own worktree with a coding-agent runtime, checks it with the project's gates, reviews and merges it into the integration branch, and turns what retries cannot fix into problems.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

// Factory makes a runtime adapter; runtimes.New unless a test injects another.
type Factory func(name string, cfg project.RuntimeConfig, opts runtimes.Options) (runtimes.Runtime, error)

// Config is what a supervisor needs; DB and Repo are required.
type Config struct {
	DB   *state.DB
	Repo repos.Repo
	// Runtimes makes the coding-agent adapters (default runtimes.New).
	Runtimes Factory
	// Clock tells the time for waits on a provider's reset (default the wall clock).
	Clock Clock
	// Env is the environment agents and gates inherit, before secrets are
	// removed (default os.Environ()).
	Env []string
	// Secrets are extra values to keep out of logs and problems.
	Secrets []string
	// Logger gets what the supervisor does (default: discarded).
	Logger *slog.Logger
	// OnEvent is called with every event after it is stored.
	OnEvent func(Event)
	// UntilDone makes Run return once no started job of the repository is
	// left running (every one done or cancelled).
	UntilDone bool
	// Poll is how often the store is checked for decisions and pause
	// changes (default 200ms).
	Poll time.Duration
	// SessionTimeout limits one agent session when project.yaml sets no
	// runtimes.timeout (default one hour).
	SessionTimeout time.Duration
	// StopGrace is how long running sessions may go on finishing their
	// step once Run's context ends; nothing new starts meanwhile, and what
	// still runs after it is stopped (default 0: stopped at once).
	StopGrace time.Duration
}

// Supervisor runs the started jobs of one repository.
type Supervisor struct {
	db      *state.DB
	store   *problems.Store
	repo    repos.Repo
	root    string
	factory Factory
	clock   Clock
	env     []string
	secrets []string
	log     *slog.Logger
	onEvent func(Event)
	until   bool
	poll    time.Duration
	timeout time.Duration
	grace   time.Duration
	pid     int

	// mu guards the jobs, their tasks, the running set and the project settings.
	mu       sync.Mutex
	proj     project.Config
	projMod  time.Time
	jobs     map[int64]*job
	running  map[*task]context.CancelFunc
	paused   problems.Pause
	rts      map[string]runtimes.Runtime
	rtWait   map[string]time.Time // a runtime's provider is out of quota until then
	wake     chan struct{}
	fatal    chan error // a goroutine's panic, which ends Run
	wg       sync.WaitGroup
	mergeSem chan struct{}
	// integChecked says the integration work tree was checked since the
	// last rollback; it is used only while mergeSem is held.
	integChecked bool
	// repoMu serialises changes to the repository's shared metadata
	// (work trees and branches), which git does not lock against each other.
	repoMu   sync.Mutex
	stats    Stats
	statsMu  sync.Mutex
	stopping bool
}

// Stats splits where a supervisor's time went, for the benchmark: the
// supervisor's own overhead is Pipeline minus Session, Git, Gate, MergeWait
// and RepoWait, plus Scheduler.
type Stats struct {
	Merged    int           // tasks merged
	Pipeline  time.Duration // wall time of task pipelines, summed
	Session   time.Duration // agent sessions
	Git       time.Duration // git commands: worktrees, commits, merges
	Gate      time.Duration // task and full gates
	MergeWait time.Duration // waiting for the integration worktree
	RepoWait  time.Duration // waiting for another task's work tree change
	Scheduler time.Duration // scheduler passes and store checks
}

// Overhead is the supervisor's own time: bookkeeping, not git, gates or agents.
func (s Stats) Overhead() time.Duration {
	return s.Pipeline - s.Session - s.Git - s.Gate - s.MergeWait - s.RepoWait + s.Scheduler
}

// New checks cfg and returns a supervisor for the repository.
func New(cfg Config) (*Supervisor, error) {
	if cfg.DB == nil {
		return nil, errors.New("supervisor: no state store")
	}
	if cfg.Repo.Path == "" || cfg.Repo.Name == "" {
		return nil, errors.New("supervisor: no repository; register it with agentkit init")
	}
	s := &Supervisor{
		db:       cfg.DB,
		store:    problems.NewStore(cfg.DB),
		repo:     cfg.Repo,
		root:     cfg.Repo.Path,
		factory:  cfg.Runtimes,
		clock:    cfg.Clock,
		env:      cfg.Env,
		secrets:  cfg.Secrets,
		log:      cfg.Logger,
		onEvent:  cfg.OnEvent,
		until:    cfg.UntilDone,
		poll:     cfg.Poll,
		timeout:  cfg.SessionTimeout,
		grace:    cfg.StopGrace,
		pid:      os.Getpid(),
		jobs:     map[int64]*job{},
		running:  map[*task]context.CancelFunc{},
		rts:      map[string]runtimes.Runtime{},
		rtWait:   map[string]time.Time{},
		wake:     make(chan struct{}, 1),
		mergeSem: make(chan struct{}, 1),
		fatal:    make(chan error, 1),
	}
	if s.factory == nil {
		s.factory = runtimes.New
	}
	if s.clock == nil {
		s.clock = RealClock{}
	}
	if s.env == nil {
		s.env = os.Environ()
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.poll <= 0 {
		s.poll = 200 * time.Millisecond
	}
	if s.timeout <= 0 {
		s.timeout = time.Hour
	}
	s.store.Now = s.clock.Now
	red := newRedactor(s.env, s.secrets)
	s.store.Redact = red
	return s, nil
}

// Stats returns where the supervisor's time went so far.
func (s *Supervisor) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

func (s *Supervisor) addStat(f func(*Stats)) {
	s.statsMu.Lock()
	f(&s.stats)
	s.statsMu.Unlock()
}

// Run supervises the repository until ctx ends (or, with UntilDone, until no
// started job is left running). It takes the repository's lock, reconciles
// what a previous supervisor left, and then plans, launches, checks, merges
// and applies decisions. Running sessions are stopped when ctx ends; they are
// resumed by the next supervisor.
func (s *Supervisor) Run(ctx context.Context) error {
	lock, err := acquireLock(s.root)
	if err != nil {
		return err
	}
	defer lock.release()
	if _, _, err := git.Author(ctx, s.root); err != nil {
		return err
	}
	if err := s.loadProject(); err != nil {
		return err
	}
	if _, err := project.EnsureGitignore(s.root); err != nil {
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening a watch connection to the state store: %w", err)
	}
	defer conn.Close()

	runCtx, cancelAll := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		cancelAll()
		s.wg.Wait()
	}()
	if err := s.loadJobs(ctx); err != nil {
		return err
	}
	if err := s.reconcile(ctx); err != nil {
		return err
	}
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	lastVersion := int64(-1)
	dirty := true
	var timer <-chan time.Time
	var timerAt time.Time
	for {
		if v, err := s.db.DataVersion(ctx, conn); err == nil && v != lastVersion {
			lastVersion, dirty = v, true
		}
		if dirty {
			dirty = false
			start := time.Now()
			if err := s.refresh(ctx); err != nil {
				s.log.Error("reading the state store", "err", err)
			}
			finished := s.schedule(runCtx)
			s.addStat(func(st *Stats) { st.Scheduler += time.Since(start) })
			if finished && s.until {
				return nil
			}
			if next := s.nextWake(); !next.Equal(timerAt) {
				timerAt, timer = next, nil
				if !next.IsZero() {
					timer = s.clock.After(next.Sub(s.clock.Now()))
				}
			}
		}
		select {
		case <-ctx.Done():
			s.drain()
			return nil
		case err := <-s.fatal:
			return err
		case <-s.wake:
			dirty = true
		case <-timer:
			timerAt, timer, dirty = time.Time{}, nil, true
		case <-ticker.C:
		}
	}
}

// drain lets running pipelines finish the step they are in, for up to the
// stop grace, while nothing new starts; Run then stops what still runs.
func (s *Supervisor) drain() {
	s.mu.Lock()
	grace := s.grace
	if grace <= 0 {
		s.mu.Unlock()
		return
	}
	s.stopping = true
	busy := len(s.running)
	for _, j := range s.jobs {
		if j.planning || j.reviewing {
			busy++
		}
	}
	s.mu.Unlock()
	if busy == 0 {
		return
	}
	s.log.Info("stopping: running sessions may finish", "sessions", busy, "grace", grace.String())
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.log.Warn("stopping: the grace is over; stopping the sessions that still run")
	}
}

// SetStopGrace changes the stop grace (Config.StopGrace) for a stop to come:
// the service sets what its stop command asked before it stops the supervisor.
func (s *Supervisor) SetStopGrace(d time.Duration) {
	s.mu.Lock()
	s.grace = d
	s.mu.Unlock()
}

// guard turns a panic in one of the supervisor's goroutines into an error
// that ends Run (after the others stopped), so whoever hosts the supervisor
// can log it and start it again; the store keeps what was done.
func (s *Supervisor) guard(what string) {
	r := recover()
	if r == nil {
		return
	}
	err := fmt.Errorf("supervisor: internal error in %s: %v; start the supervisor again (it continues where it stopped) and report this with the log", what, r)
	s.log.Error("panic", "in", what, "panic", r, "stack", string(debug.Stack()))
	select {
	case s.fatal <- err:
	default:
	}
}

// kick asks the scheduler for a pass.
func (s *Supervisor) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loadProject (re)reads .ai/project.yaml when it changed.
func (s *Supervisor) loadProject() error {
	path := project.Path(s.root)
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("reading project settings: %w (run agentkit init in %s)", err, s.root)
	}
	s.mu.Lock()
	same := fi.ModTime().Equal(s.projMod) && !s.projMod.IsZero()
	s.mu.Unlock()
	if same {
		return nil
	}
	cfg, err := project.Load(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proj, s.projMod = cfg, fi.ModTime()
	s.rts = map[string]runtimes.Runtime{}
	s.mu.Unlock()
	return nil
}

// project returns the current settings.
func (s *Supervisor) project() project.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proj
}

// runtime returns the adapter called name, made once per project settings.
func (s *Supervisor) runtime(name string) (runtimes.Runtime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt, ok := s.rts[name]; ok {
		return rt, nil
	}
	cfg, ok := s.proj.Runtimes.Runtime(name)
	if !ok {
		return nil, fmt.Errorf("unknown runtime %q; use one of claude, codex, opencode, command", name)
	}
	rt, err := s.factory(name, cfg, runtimes.Options{
		Env:      s.env,
		AllowEnv: s.proj.Runtimes.AllowEnv,
		Secrets:  s.secrets,
		Grace:    s.proj.Runtimes.Grace.Or(runtimes.DefaultGrace),
		Now:      s.clock.Now,
	})
	if err != nil {
		return nil, err
	}
	s.rts[name] = rt
	return rt, nil
}

// childEnv is the environment of gates: the parent's minus every secret.
func (s *Supervisor) childEnv() []string {
	s.mu.Lock()
	allow := s.proj.Runtimes.AllowEnv
	s.mu.Unlock()
	return runtimes.ChildEnv(s.env, allow, nil)
}
