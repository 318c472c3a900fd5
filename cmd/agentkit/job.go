package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/supervisor"
)

func newCmdJob(ios *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Create, start, follow, cancel and clean up jobs",
		Long: `A job is what you ask agentkit to do in this repository: a request, planned
into tasks (.ai/tasks.yaml) that coding agents build in their own work trees,
check with your gates, and merge into the integration branch. See docs/jobs.md.`,
	}
	cmd.AddCommand(
		newCmdJobCreate(ios, false, nil),
		newCmdJobCreate(ios, true, nil),
		newCmdJobStart(ios, nil),
		newCmdJobStatus(ios, nil),
		newCmdJobCancel(ios, nil),
		newCmdJobClean(ios, nil),
	)
	return cmd
}

// currentRepo finds the registered repository the terminal is in.
func currentRepo(ctx context.Context, ios *ioStreams, db *state.DB) (repos.Repo, error) {
	wd, err := ios.getwd()
	if err != nil {
		return repos.Repo{}, err
	}
	root, err := git.TopLevel(ctx, wd)
	if err != nil {
		return repos.Repo{}, err
	}
	r, err := repos.ByPath(ctx, db, root)
	if errors.Is(err, state.ErrNotFound) {
		return repos.Repo{}, fmt.Errorf("%s is not registered with agentkit: run agentkit init there first", root)
	}
	return r, err
}

// openRepo opens the store and finds the current repository.
func (ios *ioStreams) openRepo(ctx context.Context) (*state.DB, repos.Repo, error) {
	db, err := ios.openDB(ctx)
	if err != nil {
		return nil, repos.Repo{}, err
	}
	r, err := currentRepo(ctx, ios, db)
	if err != nil {
		db.Close()
		return nil, repos.Repo{}, err
	}
	return db, r, nil
}

type jobCreateOptions struct {
	ios         *ioStreams
	Update      bool
	Name        string
	RequestFile string
}

func newCmdJobCreate(ios *ioStreams, update bool, runF func(*jobCreateOptions) error) *cobra.Command {
	opts := &jobCreateOptions{ios: ios, Update: update}
	use, short := "create NAME --request-file FILE", "Create a job from a request (a text file; - reads standard input)"
	hint := "give the job's name, like: agentkit job create calendar --request-file request.md"
	if update {
		use, short = "update NAME --request-file FILE", "Add a correction to a job; it is re-planned before anything new launches or merges"
		hint = "give the job's name, like: agentkit job update calendar --request-file correction.md"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(1, hint),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.RequestFile == "" {
				return usageError{msg: "--request-file is required (a text file with the request, or - for standard input)"}
			}
			if runF != nil {
				return runF(opts)
			}
			return jobCreateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.RequestFile, "request-file", "", "the request (or correction) as text; - reads standard input")
	return cmd
}

func jobCreateRun(ctx context.Context, opts *jobCreateOptions) error {
	ios := opts.ios
	var data []byte
	var err error
	if opts.RequestFile == "-" {
		data, err = io.ReadAll(ios.In)
	} else {
		data, err = os.ReadFile(opts.RequestFile)
	}
	if err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	db, repo, err := ios.openRepo(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.Update {
		jf, err := supervisor.UpdateJob(ctx, db, repo, opts.Name, string(data), ios.now())
		if err != nil {
			return err
		}
		fmt.Fprintf(ios.Out, "Added revision %d to job %s (.ai/jobs/%s.json). The supervisor re-plans it; until then nothing new launches or merges.\n", jf.Revision(), opts.Name, opts.Name)
		return nil
	}
	jf, err := supervisor.CreateJob(ctx, db, repo, opts.Name, string(data), ios.now())
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "Created job %s (.ai/jobs/%s.json", opts.Name, opts.Name)
	if n := len(jf.Acceptance); n > 0 {
		fmt.Fprintf(ios.Out, ", %d acceptance criteria", n)
	}
	fmt.Fprintf(ios.Out, "). Start it with: agentkit job start %s\n", opts.Name)
	return nil
}

type jobStartOptions struct {
	ios        *ioStreams
	Name       string
	MaxWorkers int
	Foreground bool
	// run hosts the supervisor; tests replace it.
	run func(ctx context.Context, cfg supervisor.Config) error
	// ensure starts the background service unless it runs; tests replace it.
	ensure func(*ioStreams) (pid int, already bool, err error)
}

func newCmdJobStart(ios *ioStreams, runF func(*jobStartOptions) error) *cobra.Command {
	opts := &jobStartOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "start [NAME]",
		Short: "Start a job (or every created job of this repository)",
		Long: `Marks the job started and makes sure the background service runs (starting it
when it does not); the service runs the job and emails its problems. With
--foreground, this repository's supervisor runs in the terminal instead, until
every started job is done or cancelled; Ctrl-C stops it cleanly, and running
sessions continue when it starts again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return jobStartRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxWorkers, "max-workers", 0, "run at most N tasks of the job at once (default: max_workers of .ai/project.yaml)")
	cmd.Flags().BoolVar(&opts.Foreground, "foreground", false, "run the supervisor in this terminal until the job is done")
	return cmd
}

func jobStartRun(ctx context.Context, opts *jobStartOptions) error {
	ios := opts.ios
	db, repo, err := ios.openRepo(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	names, err := supervisor.StartJobs(ctx, db, repo, opts.Name, opts.MaxWorkers, ios.now())
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "Started %s.\n", strings.Join(names, ", "))
	if !opts.Foreground {
		return jobStartService(ios, opts.ensure)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := supervisor.Config{
		DB:        db,
		Repo:      repo,
		UntilDone: true,
		Logger:    slog.New(slog.NewTextHandler(ios.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnEvent: func(e supervisor.Event) {
			who := e.Job
			if e.Task != "" {
				who += "/" + e.Task
			}
			fmt.Fprintf(ios.Out, "%s %-20s %s\n", e.At.Local().Format("15:04:05"), who, e.Message)
		},
	}
	run := opts.run
	if run == nil {
		run = func(ctx context.Context, cfg supervisor.Config) error {
			sup, err := supervisor.New(cfg)
			if err != nil {
				return err
			}
			return sup.Run(ctx)
		}
	}
	fmt.Fprintf(ios.Out, "Supervising %s in the foreground (Ctrl-C stops; running sessions continue when you start again).\n", repo.Name)
	if err := run(ctx, cfg); err != nil {
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintln(ios.Out, "Stopped. Run agentkit job start --foreground to continue.")
		return nil
	}
	jobs, err := status.Jobs(context.WithoutCancel(ctx), db, repo.Name, repo.Path, "")
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if contains(names, j.Name) && len(j.Notes) > 0 {
			fmt.Fprintf(ios.Out, "Job %s is %s: %s\n", j.Name, j.State, j.Notes[0])
		}
	}
	return nil
}

// jobStartService makes sure the background service runs the started job.
func jobStartService(ios *ioStreams, ensure func(*ioStreams) (int, bool, error)) error {
	if ensure == nil {
		ensure = ensureService
	}
	pid, already, err := ensure(ios)
	if err != nil {
		return fmt.Errorf("the job is started, but the background service could not be started: %w; run agentkit service start, or agentkit job start --foreground to run it in this terminal", err)
	}
	home, _ := ios.home()
	if already {
		fmt.Fprintf(ios.Out, "The background service (pid %d) runs it. Follow it with agentkit job status.\n", pid)
		return nil
	}
	fmt.Fprintf(ios.Out, "Started the background service (pid %d); it runs the job. Follow it with agentkit job status; the service's log is %s.\n", pid, service.Files{Home: home}.Log())
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

type jobStatusOptions struct {
	ios  *ioStreams
	Name string
	JSON bool
}

func newCmdJobStatus(ios *ioStreams, runF func(*jobStatusOptions) error) *cobra.Command {
	opts := &jobStatusOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show jobs: tasks with state, attempts, runtime and last event; open problems",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return jobStatusRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (an array of jobs)")
	return cmd
}

func jobStatusRun(ctx context.Context, opts *jobStatusOptions) error {
	db, repo, err := opts.ios.openRepo(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	jobs, err := status.Jobs(ctx, db, repo.Name, repo.Path, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		if jobs == nil {
			jobs = []status.JobStatus{}
		}
		return writeJSON(opts.ios, jobs)
	}
	w := opts.ios.Out
	if len(jobs) == 0 {
		fmt.Fprintln(w, "No jobs yet: agentkit job create NAME --request-file FILE")
		return nil
	}
	now := opts.ios.now()
	for i, j := range jobs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Job %s: %s (revision %d, %d tokens)\n", j.Name, j.State, j.Revision, j.Tokens)
		for _, n := range j.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		if len(j.Tasks) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  TASK\tSTATE\tATTEMPTS\tRUNTIME\tLAST EVENT")
			for _, t := range j.Tasks {
				st := t.State
				if t.State == "waiting" && !t.WaitUntil.IsZero() {
					st += " until " + t.WaitUntil.Local().Format("15:04")
				}
				last := "-"
				if t.LastEvent != "" {
					last = age(now.Sub(t.LastEventAt)) + " ago: " + truncate(t.LastEvent, 70)
				}
				fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", t.Name, st, t.Attempts, orDash(t.Runtime), last)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, p := range j.Problems {
			task := p.Task
			if task == "" {
				task = "(job)"
			}
			fmt.Fprintf(w, "  problem %s  %s  %s: %s\n", p.Code, task, p.Kind, truncate(p.Summary, 70))
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type jobNameOptions struct {
	ios  *ioStreams
	Name string
}

func newCmdJobCancel(ios *ioStreams, runF func(*jobNameOptions) error) *cobra.Command {
	opts := &jobNameOptions{ios: ios}
	return &cobra.Command{
		Use:   "cancel NAME",
		Short: "Cancel a job: its sessions stop, its unfinished tasks are cancelled, merged work stays",
		Args:  exactArgs(1, "give the job's name, like: agentkit job cancel calendar"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			db, repo, err := opts.ios.openRepo(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			if err := supervisor.CancelJob(cmd.Context(), db, repo, opts.Name, opts.ios.now()); err != nil {
				return err
			}
			fmt.Fprintf(opts.ios.Out, "Cancelled job %s. A running supervisor stops its sessions within a second; agentkit job clean %s removes its work trees and branches.\n", opts.Name, opts.Name)
			return nil
		},
	}
}

func newCmdJobClean(ios *ioStreams, runF func(*jobNameOptions) error) *cobra.Command {
	opts := &jobNameOptions{ios: ios}
	return &cobra.Command{
		Use:   "clean NAME",
		Short: "Remove a done or cancelled job's work trees and task branches",
		Args:  exactArgs(1, "give the job's name, like: agentkit job clean calendar"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			db, repo, err := opts.ios.openRepo(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := supervisor.CleanJob(cmd.Context(), db, repo, opts.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(opts.ios.Out, "Removed %d work tree(s) and %d branch(es) of job %s; the integration branch is untouched.\n", len(res.Worktrees), len(res.Branches), opts.Name)
			return nil
		},
	}
}
