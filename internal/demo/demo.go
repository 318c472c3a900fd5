// Package demo runs agentkit's whole loop on one machine with nothing set up
// (agentkit demo): a temporary repository and agentkit home, a scripted
// builder in place of a coding agent, and mail servers of its own on
// 127.0.0.1 in place of the owner's mailbox.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
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
	if err := r.stepConfirmation(ctx); err != nil {
		return Result{}, err
	}
	if err := r.stepDone(ctx); err != nil {
		return Result{}, err
	}
	return r.summary(ctx, code)
}
