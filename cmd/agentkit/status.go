package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/status"
)

type statusOptions struct {
	ios  *ioStreams
	JSON bool
}

func newCmdStatus(ios *ioStreams, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show registered repositories, open problems, and whether work is paused",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func statusRun(ctx context.Context, opts *statusOptions) error {
	db, err := opts.ios.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := status.Read(ctx, db)
	if err != nil {
		return err
	}
	if opts.JSON {
		if st.Repos == nil {
			st.Repos = []status.RepoStatus{}
		}
		return writeJSON(opts.ios, st)
	}
	w := opts.ios.Out
	if st.PausedAll {
		fmt.Fprintf(w, "All work is paused, by %s. Resume with: agentkit resume\n", st.PausedBy)
	}
	if len(st.Repos) == 0 {
		fmt.Fprintln(w, "No repository is registered yet: run agentkit init in one.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tOPEN PROBLEMS\tPAUSED\tPATH")
	for _, r := range st.Repos {
		paused := "no"
		if r.Paused {
			paused = "yes, by " + r.PausedBy
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Name, r.OpenProblems, paused, r.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range st.Repos {
		for _, j := range r.Jobs {
			held := ""
			if j.Held {
				held = ", held"
			}
			fmt.Fprintf(w, "%s: job %s %s, %d of %d tasks merged%s (agentkit job status)\n", r.Name, j.Name, j.State, j.Merged, j.Tasks, held)
		}
	}
	if st.OpenProblems > 0 {
		fmt.Fprintf(w, "\n%d open problem(s): agentkit problem list\n", st.OpenProblems)
	}
	return nil
}
