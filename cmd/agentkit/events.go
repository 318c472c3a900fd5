package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/status"
)

type eventsOptions struct {
	ios   *ioStreams
	Repo  string
	Job   string
	Task  string
	Limit int
	JSON  bool
}

func newCmdEvents(ios *ioStreams, runF func(*eventsOptions) error) *cobra.Command {
	opts := &eventsOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show what the supervisor did, newest last",
		Long: `Every state change of a job and its tasks is an event: sessions started,
gates run, merges, problems, decisions applied. Inside a registered repository
the events are that repository's; elsewhere, every repository's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return usageError{msg: "--limit must be a positive number"}
			}
			if runF != nil {
				return runF(opts)
			}
			return eventsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "only this repository (its short name)")
	cmd.Flags().StringVar(&opts.Job, "job", "", "only this job")
	cmd.Flags().StringVar(&opts.Task, "task", "", "only this task")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "show the newest N events")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (an array of events)")
	return cmd
}

func eventsRun(ctx context.Context, opts *eventsOptions) error {
	db, err := opts.ios.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	repo := opts.Repo
	if repo == "" {
		if r, err := currentRepo(ctx, opts.ios, db); err == nil {
			repo = r.Name
		} else if opts.Job != "" {
			return errors.New("--job needs a repository: run it inside one, or add --repo NAME")
		}
	}
	list, err := status.Events(ctx, db, status.EventFilter{Repo: repo, Job: opts.Job, Task: opts.Task, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if opts.JSON {
		if list == nil {
			list = []status.Event{}
		}
		return writeJSON(opts.ios, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(opts.ios.Out, "No events yet.")
		return nil
	}
	tw := tabwriter.NewWriter(opts.ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tREPO\tJOB/TASK\tKIND\tMESSAGE")
	for _, e := range list {
		who := e.Job
		if e.Task != "" {
			who += "/" + e.Task
		}
		if who == "" {
			who = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.At.Local().Format("01-02 15:04:05"), e.Repo, who, e.Kind, truncate(e.Message, 100))
	}
	return tw.Flush()
}
