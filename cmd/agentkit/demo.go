package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/demo"
)

type demoOptions struct {
	ios  *ioStreams
	Keep bool
}

func newCmdDemo(ios *ioStreams, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show the whole loop on this machine: a job, a problem emailed, a reply obeyed",
		Long: `Run one small job from start to finish with nothing set up: a temporary Git
repository and agentkit home, a scripted builder instead of a coding agent, and
mail servers of the demo's own on 127.0.0.1 instead of your mailbox. One task
fails its gate, its problem is emailed, the owner's signed reply "retry" is
verified and obeyed, and the job ends on the integration branch.

Your ~/.agentkit and your repositories are never touched. Everything is
removed at the end unless --keep is given. Needs git and a POSIX shell.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the repository, the agentkit home and the mail for inspection (the demo says where)")
	return cmd
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A reader that goes away (agentkit demo | head) must not kill the demo
	// before it has removed its folder: writes then fail quietly instead.
	signal.Ignore(syscall.SIGPIPE)
	defer signal.Reset(syscall.SIGPIPE)
	_, err := demo.Run(ctx, demo.Options{Out: opts.ios.Out, Keep: opts.Keep})
	return err
}
