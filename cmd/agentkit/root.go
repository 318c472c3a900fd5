package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// run builds the command tree, executes it with args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newCmdRoot(&ioStreams{In: stdin, Out: stdout, Err: stderr})
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "agentkit: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError marks an error caused by how the command was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func newCmdRoot(ios *ioStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "agentkit",
		Short:         "Run coding-agent jobs unattended; answer their problems by email",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{msg: fmt.Sprintf("%v (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(
		newCmdInit(ios, nil),
		newCmdProblem(ios),
		newCmdStatus(ios, nil),
		newCmdPause(ios, true, nil),
		newCmdPause(ios, false, nil),
		newCmdVersion(ios),
		newCmdService(ios),
		newCmdRuntimes(ios, nil),
		newCmdPhone(ios),
		newCmdJob(ios),
		newCmdEvents(ios, nil),
		newCmdDemo(ios, nil),
	)
	return root
}
