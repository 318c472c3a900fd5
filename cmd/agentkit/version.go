package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func newCmdVersion(ios *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print agentkit's version and the revision it was built from",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(ios.Out, versionString(debug.ReadBuildInfo))
		},
	}
}

// versionString describes the build: version, VCS revision, whether the tree
// was modified, and the Go version.
func versionString(read func() (*debug.BuildInfo, bool)) string {
	v, rev, modified, goVersion := version, "", false, ""
	if bi, ok := read(); ok {
		goVersion = bi.GoVersion
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	out := "agentkit " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " revision " + rev
		if modified {
			out += " (modified)"
		}
	} else {
		out += " revision unknown (built without VCS information)"
	}
	if goVersion != "" {
		out += ", " + goVersion
	}
	return out
}
