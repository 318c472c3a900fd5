// Package demo runs agentkit's whole loop on one machine with nothing set up
// (agentkit demo): a temporary repository and agentkit home, a scripted
// builder in place of a coding agent, and mail servers of its own on
// 127.0.0.1 in place of the owner's mailbox.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
	"github.com/agentkit/agentkit/supervisor"
)

// DefaultTimeout bounds a demo run; it takes seconds.
const DefaultTimeout = 2 * time.Minute

// botAddress is the bot's mailbox on the demo's own mail server.
const botAddress = "agentkit@bot.example"

// Options shape a demo run.
type Options struct {
	// Out gets the story.
	Out io.Writer
	// Keep leaves the demo's folder (repository, agentkit home, mail) for
	// inspection instead of removing it.
	Keep bool
	// TempDir is where the demo's folder is made; "" is the system's
	// temporary folder.
	TempDir string
	// Timeout bounds the run (default DefaultTimeout).
	Timeout time.Duration
}

// Result is what the demo saw happen, read back from the state store and
// from what its SMTP server accepted.
type Result struct {
	// Dir is the demo's folder; it is gone after the run unless Options.Keep.
	Dir string
	// Code is the problem's code.
	Code problems.Code
	// Emails the SMTP server accepted, by what the outbox owed.
	ProblemEmails, Confirmations, JobDoneEmails, Answers int
	// Replies the mailbot read: obeyed, and refused (the forged one).
	Obeyed, Refused int
	// Merged of Tasks tasks were merged.
	Merged, Tasks int
	// JobState is the job's state at the end (done), Head the integration
	// branch's head.
	JobState, Branch, Head string
	// Elapsed is how long the run took.
	Elapsed time.Duration
}

// Check says what this machine lacks for the demo, with what to do.
func Check() error {
	if runtime.GOOS == "windows" {
		return errors.New("agentkit demo runs its scripted builder and gates with a POSIX shell (sh), which Windows does not have: run it in WSL, or on Linux or macOS")
	}
	if _, err := exec.LookPath("git"); err != nil {
		return errors.New("agentkit demo needs git, which is not on PATH: install it (apt install git, brew install git, or https://git-scm.com/downloads) and run the demo again")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		return errors.New("agentkit demo needs a POSIX shell (sh) on PATH for its scripted builder and gates: install one, or put /bin on PATH, and run the demo again")
	}
	return nil
}

// Run plays the demo and prints its story to o.Out. It removes everything it
// made unless o.Keep is set.
func Run(ctx context.Context, o Options) (res Result, err error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if err := Check(); err != nil {
		return Result{}, err
	}
	start := time.Now()
	dir, err := os.MkdirTemp(o.TempDir, "agentkit-demo-")
	if err != nil {
		return Result{}, fmt.Errorf("making the demo's folder (set TMPDIR to a writable folder): %w", err)
	}
	// Git and the supervisor see resolved paths (macOS's /var is /private/var).
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	r := newRunner(o, dir)
	defer func() {
		r.stop()
		res.Dir = dir
		if o.Keep {
			r.printKept()
			if err != nil {
				err = fmt.Errorf("%w\nthe demo's files are in %s; its log is %s", err, dir, filepath.Join(dir, "demo.log"))
			}
			return
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("removing the demo's folder %s: %w (remove it by hand)", dir, rmErr)
		}
		if err != nil {
			err = fmt.Errorf("%w\nrun agentkit demo --keep to keep the demo's files and its log for a look", err)
			return
		}
		fmt.Fprintf(r.out, "Removed %s; agentkit demo --keep keeps it for a look.\n", dir)
	}()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res, err = r.play(ctx)
	res.Elapsed = time.Since(start)
	if err == nil {
		fmt.Fprintf(r.out, "Finished in %.1fs.\n", res.Elapsed.Seconds())
	}
	return res, err
}

// runner is one demo run: its folders, store, mail servers, bot and supervisor.
type runner struct {
	o                                 Options
	out                               io.Writer
	dir, repoDir, home, mailDir, dict string
	timeout                           time.Duration

	logFile *os.File
	log     *slog.Logger
	db      *state.DB
	store   *problems.Store
	repo    repos.Repo
	owner   *owner
	mail    *mailServers

	botCancel, supCancel context.CancelFunc
	botDone, supDone     chan struct{}
	botErr, supErr       error

	evMu   sync.Mutex
	events []supervisor.Event
}

func newRunner(o Options, dir string) *runner {
	return &runner{o: o, out: o.Out, dir: dir, timeout: o.Timeout,
		repoDir: filepath.Join(dir, "bakery-site"),
		home:    filepath.Join(dir, "agentkit-home"),
		mailDir: filepath.Join(dir, "mail"),
		dict:    filepath.Join(dir, "owner", "dictionary.txt"),
	}
}

// play runs the story's steps.
func (r *runner) play(ctx context.Context) (Result, error) {
	fmt.Fprintf(r.out, `agentkit demo: one job from start to finish, on this machine only.
A scripted builder stands in for a coding agent, and mail servers of the
demo's own on 127.0.0.1 stand in for your mailbox. Your ~/.agentkit and your
repositories are not touched: everything happens in
  %s
`, r.dir)
	if err := r.setup(ctx); err != nil {
		return Result{}, err
	}
	r.stepRepository()
	if err := r.start(ctx); err != nil {
		return Result{}, err
	}
	code, problemMail, err := r.stepStopped(ctx)
	if err != nil {
		return Result{}, err
	}
	retryLink, err := r.stepProblemEmail(problemMail)
	if err != nil {
		return Result{}, err
	}
	if err := r.stepForgery(ctx, problemMail, code); err != nil {
		return Result{}, err
	}
	if err := r.stepOwnerReplies(retryLink); err != nil {
		return Result{}, err
	}
	if err := r.stepObeyed(ctx, code); err != nil {
		return Result{}, err
	}
	if err := r.stepConfirmation(ctx, code); err != nil {
		return Result{}, err
	}
	if err := r.stepDone(ctx); err != nil {
		return Result{}, err
	}
	return r.summary(ctx, code)
}

// setup makes the repository, the owner's dictionary, the agentkit home
// with its store, and the mail servers.
func (r *runner) setup(ctx context.Context) error {
	if err := makeRepo(ctx, r.repoDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.dict), 0o755); err != nil {
		return fmt.Errorf("writing the owner's dictionary: %w", err)
	}
	if err := os.WriteFile(r.dict, []byte(dictionary()), 0o644); err != nil {
		return fmt.Errorf("writing the owner's dictionary: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, "demo.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the demo's log: %w", err)
	}
	r.logFile = f
	r.log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if r.db, err = state.Open(ctx, filepath.Join(r.home, "state.db")); err != nil {
		return err
	}
	r.store = problems.NewStore(r.db)
	if r.repo, _, err = repos.Register(ctx, r.db, repoName, r.repoDir, time.Now()); err != nil {
		return err
	}
	if err := r.store.SetPhoneEnabled(ctx, true); err != nil {
		return err
	}
	if r.owner, err = newOwner(); err != nil {
		return err
	}
	return nil
}

// start runs the mail servers, the mailbot and the supervisor, and starts the job.
func (r *runner) start(ctx context.Context) error {
	password := randomPassword()
	var err error
	if r.mail, err = startMail(r.mailDir, botAddress, password); err != nil {
		return err
	}
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress = botAddress
	cfg.OwnerAddresses = []string{r.owner.Address}
	// The demo's mail server stands for the bot's provider, whose stamps
	// on the mail it receives count.
	cfg.TrustedAuthservIDs = []string{providerHost}
	if cfg.IMAP, err = loopbackServer(r.mail.IMAPAddr); err != nil {
		return err
	}
	if cfg.SMTP, err = loopbackServer(r.mail.SMTPAddr); err != nil {
		return err
	}
	// Saved for a look with --keep; it never holds the password.
	if err := cfg.Save(mailbot.ConfigPath(r.home)); err != nil {
		return err
	}
	bot, err := mailbot.New(mailbot.Options{
		DB: r.db, Store: r.store, Config: cfg, Password: secrets.NewPassword(password),
		Logger: r.log, LookupTXT: r.owner.LookupTXT,
		StoreWatch:     50 * time.Millisecond,
		ReconnectDelay: func(int) time.Duration { return 100 * time.Millisecond },
	})
	if err != nil {
		return err
	}
	botCtx, botCancel := context.WithCancel(context.WithoutCancel(ctx))
	r.botCancel, r.botDone = botCancel, make(chan struct{})
	go func() {
		defer close(r.botDone)
		r.botErr = bot.Run(botCtx)
	}()

	now := time.Now()
	if _, err := supervisor.CreateJob(ctx, r.db, r.repo, jobName, request, now); err != nil {
		return err
	}
	if _, err := supervisor.StartJobs(ctx, r.db, r.repo, jobName, 0, now); err != nil {
		return err
	}
	sup, err := supervisor.New(supervisor.Config{
		DB: r.db, Repo: r.repo, Env: r.childEnv(), Logger: r.log,
		UntilDone: true, Poll: 100 * time.Millisecond,
		OnEvent: func(e supervisor.Event) {
			r.evMu.Lock()
			r.events = append(r.events, e)
			r.evMu.Unlock()
		},
	})
	if err != nil {
		return err
	}
	supCtx, supCancel := context.WithCancel(context.WithoutCancel(ctx))
	r.supCancel, r.supDone = supCancel, make(chan struct{})
	go func() {
		defer close(r.supDone)
		r.supErr = sup.Run(supCtx)
	}()
	return nil
}

// childEnv is the environment of the builder and the gates: the user's,
// with the demo's agentkit home and the owner's dictionary.
func (r *runner) childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "AGENTKIT_HOME" || k == "SPELL_DICTIONARY" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AGENTKIT_HOME="+r.home, "SPELL_DICTIONARY="+r.dict)
}

// stop ends the supervisor and the bot, stops the mail servers and closes
// the store; the folder stays until Run removes it.
func (r *runner) stop() {
	if r.supCancel != nil {
		r.supCancel()
		<-r.supDone
	}
	if r.botCancel != nil {
		r.botCancel()
		<-r.botDone
	}
	if r.mail != nil {
		r.mail.close()
	}
	if r.db != nil {
		r.db.Close()
	}
	if r.logFile != nil {
		r.logFile.Close()
	}
}

// waitFor checks cond until it holds, when mail arrives and every 50ms,
// until ctx ends. An error of the supervisor or the bot ends the wait.
func (r *runner) waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-r.supDone:
			if r.supErr != nil {
				return fmt.Errorf("waiting for %s, the supervisor stopped: %w", what, r.supErr)
			}
		case <-r.botDone:
			if r.botErr != nil {
				return fmt.Errorf("waiting for %s, the mailbot stopped: %w", what, r.botErr)
			}
		default:
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("the demo did not get to %s within %s; this machine may be very busy, try again", what, r.timeout)
			}
			return fmt.Errorf("stopped while waiting for %s: %w", what, ctx.Err())
		case <-r.mail.Arrived():
		case <-tick.C:
		}
	}
}

// eventsOf returns the supervisor's events of a task so far, from index from.
func (r *runner) eventsOf(task string, from int) []supervisor.Event {
	r.evMu.Lock()
	defer r.evMu.Unlock()
	var out []supervisor.Event
	for _, e := range r.events[min(from, len(r.events)):] {
		if e.Task == task {
			out = append(out, e)
		}
	}
	return out
}

func (r *runner) eventCount() int {
	r.evMu.Lock()
	defer r.evMu.Unlock()
	return len(r.events)
}

// loopbackServer is a server setting for addr on 127.0.0.1 in plain text,
// which the bot allows only to a loopback address.
func loopbackServer(addr string) (mailbot.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return mailbot.Server{}, fmt.Errorf("reading the demo server's address %s: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return mailbot.Server{}, fmt.Errorf("reading the demo server's port %s: %w", port, err)
	}
	return mailbot.Server{Host: host, Port: p, TLS: mailbot.TLSNone}, nil
}

// randomPassword is the bot's password on the demo's servers, made for this
// run and never shown.
func randomPassword() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
