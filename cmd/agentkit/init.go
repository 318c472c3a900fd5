package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/atomicfile"
	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/internal/repos"
)

type initOptions struct {
	ios  *ioStreams
	Name string
}

func newCmdInit(ios *ioStreams, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Register this repository and write .ai/project.yaml",
		Long: `Register the Git repository you are in with agentkit, under a short unique name
(default: its folder's name), write .ai/project.yaml with the default settings
when it is missing, and .ai/.gitignore so agentkit's run files stay out of Git.
agentkit touches no file of yours outside .ai/. Running it again changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return initRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the repository's short name (default: its folder's name)")
	return cmd
}

func initRun(ctx context.Context, opts *initOptions) error {
	ios := opts.ios
	wd, err := ios.getwd()
	if err != nil {
		return err
	}
	root, err := git.TopLevel(ctx, wd)
	if err != nil {
		return err
	}
	if !git.HasCommit(ctx, root) {
		return fmt.Errorf("%s has no commit yet; agentkit branches from your history, so commit something first (git commit --allow-empty -m 'Start')", root)
	}
	if _, _, err := git.Author(ctx, root); err != nil {
		return err
	}
	name := opts.Name
	if name == "" {
		name = repos.DefaultName(root)
	}
	db, err := ios.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.Name == "" {
		// Running init again without --name keeps the name given before.
		if r, err := repos.ByPath(ctx, db, root); err == nil {
			name = r.Name
		}
	}
	repo, created, err := repos.Register(ctx, db, name, root, ios.now())
	if err != nil {
		return err
	}
	aiDir := filepath.Join(root, ".ai")
	if err := os.MkdirAll(aiDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", aiDir, err)
	}
	wroteProject, err := writeDefaultProject(root)
	if err != nil {
		return err
	}
	wroteIgnore, err := project.EnsureGitignore(root)
	if err != nil {
		return err
	}
	switch {
	case created:
		fmt.Fprintf(ios.Out, "Registered %s as %q.\n", repo.Path, repo.Name)
	default:
		fmt.Fprintf(ios.Out, "%s is already registered as %q.\n", repo.Path, repo.Name)
	}
	if wroteProject {
		fmt.Fprintf(ios.Out, "Wrote .ai/project.yaml with the default settings; review its gates and runtimes, then commit it.\n")
	}
	if wroteIgnore {
		fmt.Fprintf(ios.Out, "Wrote .ai/.gitignore (keeps .ai/runtime/ and .ai/worktrees/ out of Git).\n")
	}
	if !created && !wroteProject && !wroteIgnore {
		fmt.Fprintf(ios.Out, "Nothing to change.\n")
	}
	return nil
}

func writeDefaultProject(root string) (bool, error) {
	path := project.Path(root)
	if _, err := os.Stat(path); err == nil {
		if _, err := project.Load(path); err != nil {
			return false, fmt.Errorf("%w (fix it, or delete it to get the defaults)", err)
		}
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	data, err := project.Default().Marshal()
	if err != nil {
		return false, err
	}
	header := "# agentkit settings for this repository: see docs/project.md in agentkit.\n"
	if err := atomicfile.Write(path, append([]byte(header), data...), 0o644); err != nil {
		return false, err
	}
	return true, nil
}
