package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// runtimesOptions are the inputs of `agentkit runtimes`.
type runtimesOptions struct {
	IO   *ioStreams
	JSON bool
	// Dir is where the search for .ai/project.yaml starts (default: the working directory).
	Dir string
	// Env is the environment the CLIs are looked up in (default: os.Environ()).
	Env []string
	// VersionTimeout bounds each --version call.
	VersionTimeout time.Duration
}

// runtimeStatus is one line of `agentkit runtimes`.
type runtimeStatus struct {
	Name    string `json:"name"`
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

func newCmdRuntimes(ios *ioStreams, runF func(*runtimesOptions) error) *cobra.Command {
	opts := &runtimesOptions{IO: ios, VersionTimeout: 30 * time.Second}
	cmd := &cobra.Command{
		Use:   "runtimes",
		Short: "Show which coding-agent CLIs are installed, where, and their versions",
		Long: "Lists each runtime adapter (claude, codex, opencode, command), whether its CLI was found\n" +
			"(AGENTKIT_CLAUDE_CLI, AGENTKIT_CODEX_CLI, AGENTKIT_OPENCODE_CLI pin a path; else PATH),\n" +
			"where, and the version it reports. The command runtime is read from .ai/project.yaml.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{msg: fmt.Sprintf("runtimes takes no arguments, got %q (see '%s --help')", args, cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runtimesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the list as JSON")
	return cmd
}

// runtimesRun looks up every runtime and prints the list.
func runtimesRun(ctx context.Context, opts *runtimesOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the working directory: %w", err)
		}
		dir = wd
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	cfg, root, err := findProject(dir)
	if err != nil {
		return err
	}
	statuses := make([]runtimeStatus, len(runtimes.Names))
	var wg sync.WaitGroup
	for i, name := range runtimes.Names {
		rc, _ := cfg.Runtimes.Runtime(name)
		if name == "command" && len(rc.Argv) > 0 && strings.ContainsAny(rc.Argv[0], `/\`) && !filepath.IsAbs(rc.Argv[0]) && root != "" {
			// ./scripts/builder.sh is relative to the repository.
			rc.Argv = append([]string{filepath.Join(root, rc.Argv[0])}, rc.Argv[1:]...)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = runtimeStatusOf(ctx, name, rc, env, opts.VersionTimeout)
		}()
	}
	wg.Wait()
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(statuses)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tFOUND\tPATH\tVERSION")
	for _, s := range statuses {
		found, path, version := "no", "-", "-"
		if s.Found {
			found, path = "yes", s.Path
		}
		if s.Version != "" {
			version = s.Version
		}
		if s.Error != "" {
			version = s.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, found, path, version)
	}
	return tw.Flush()
}

// runtimeStatusOf finds one runtime's CLI and asks its version.
func runtimeStatusOf(ctx context.Context, name string, rc project.RuntimeConfig, env []string, timeout time.Duration) runtimeStatus {
	st := runtimeStatus{Name: name}
	rt, err := runtimes.New(name, rc, runtimes.Options{Env: env})
	if err != nil {
		st.Error = "not configured: set runtimes.command.argv in .ai/project.yaml"
		if name != "command" {
			st.Error = err.Error()
		}
		return st
	}
	path, err := rt.Path()
	if err != nil {
		st.Error = strings.TrimPrefix(err.Error(), runtimes.ErrNotFound.Error()+": ")
		return st
	}
	st.Found, st.Path = true, path
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := rt.Version(vctx)
	if err != nil {
		st.Error = err.Error()
	}
	st.Version = v
	return st
}

// findProject reads .ai/project.yaml from dir or its nearest parent that has
// one, returning that repository root; without one, the defaults and "".
func findProject(dir string) (project.Config, string, error) {
	for d := dir; ; {
		p := project.Path(d)
		if _, err := os.Stat(p); err == nil {
			cfg, err := project.Load(p)
			if err != nil {
				return project.Config{}, "", fmt.Errorf("%w; fix the file or run agentkit from outside this repository", err)
			}
			return cfg, d, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return project.Config{}, "", fmt.Errorf("reading project settings: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return project.Default(), "", nil
		}
		d = parent
	}
}
