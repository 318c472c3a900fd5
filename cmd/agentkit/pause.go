package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/problems"
)

type pauseOptions struct {
	ios   *ioStreams
	Pause bool
	Repo  string
}

func newCmdPause(ios *ioStreams, pause bool, runF func(*pauseOptions) error) *cobra.Command {
	opts := &pauseOptions{ios: ios, Pause: pause}
	use, short := "pause", "Stop new launches (running sessions finish), in every repository or one"
	if !pause {
		use, short = "resume", "Lift a pause, in every repository or one"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pauseRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "only this repository (its short name)")
	return cmd
}

func pauseRun(ctx context.Context, opts *pauseOptions) error {
	s, db, err := opts.ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.Repo != "" {
		if _, err := repos.ByName(ctx, db, opts.Repo); err != nil {
			return err
		}
	}
	if err := s.SetPaused(ctx, opts.Repo, opts.Pause, opts.ios.who(), problems.Terminal); err != nil {
		return err
	}
	scope := "every repository"
	if opts.Repo != "" {
		scope = opts.Repo
	}
	if opts.Pause {
		fmt.Fprintf(opts.ios.Out, "Paused %s: no new sessions start; running ones finish. Resume with: agentkit resume%s\n", scope, repoFlag(opts.Repo))
		return nil
	}
	fmt.Fprintf(opts.ios.Out, "Resumed %s.\n", scope)
	if opts.Repo != "" {
		if p, err := s.Paused(ctx, opts.Repo); err == nil && p.Paused {
			fmt.Fprintf(opts.ios.Out, "Note: every repository is still paused (by %s); run agentkit resume without --repo to lift that.\n", p.Who)
		}
	}
	return nil
}

func repoFlag(repo string) string {
	if repo == "" {
		return ""
	}
	return " --repo " + repo
}
