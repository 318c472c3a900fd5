package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Head returns the commit HEAD points at in dir.
func Head(ctx context.Context, dir string) (string, error) {
	return Run(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
}

// RevParse returns the commit a revision names.
func RevParse(ctx context.Context, dir, rev string) (string, error) {
	return Run(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
}

// BranchExists reports whether refs/heads/branch exists.
func BranchExists(ctx context.Context, dir, branch string) bool {
	_, err := Run(ctx, dir, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// CurrentBranch returns the branch checked out in dir, "" when HEAD is detached.
func CurrentBranch(ctx context.Context, dir string) string {
	out, err := Run(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// CreateBranch creates branch at start without checking it out.
func CreateBranch(ctx context.Context, dir, branch, start string) error {
	_, err := Run(ctx, dir, "branch", "--no-track", branch, start)
	return err
}

// DeleteBranch deletes a branch, merged or not.
func DeleteBranch(ctx context.Context, dir, branch string) error {
	_, err := Run(ctx, dir, "branch", "-D", branch)
	return err
}

// IsWorktree reports whether path is the top of a work tree of the
// repository at repoDir.
func IsWorktree(ctx context.Context, repoDir, path string) bool {
	if _, err := os.Stat(filepath.Join(path, ".git")); err != nil {
		return false
	}
	top, err := Run(ctx, path, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, _ := filepath.EvalSymlinks(top)
	b, _ := filepath.EvalSymlinks(path)
	return a == b
}

// AddWorktree checks branch out in a new work tree at path. With start set,
// the branch is created there first (git worktree add -b).
func AddWorktree(ctx context.Context, repoDir, path, branch, start string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	args := []string{"worktree", "add", "--quiet"}
	if start != "" {
		args = append(args, "-b", branch, path, start)
	} else {
		args = append(args, path, branch)
	}
	if _, err := Run(ctx, repoDir, args...); err != nil {
		// A stale entry of a work tree removed by hand makes git refuse:
		// prune it and try once more.
		if _, perr := Run(ctx, repoDir, "worktree", "prune"); perr != nil {
			return err
		}
		_, err = Run(ctx, repoDir, args...)
		return err
	}
	return nil
}

// RemoveWorktree removes the work tree at path, with any changes in it.
func RemoveWorktree(ctx context.Context, repoDir, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		_, _ = Run(ctx, repoDir, "worktree", "prune")
		return nil
	}
	if _, err := Run(ctx, repoDir, "worktree", "remove", "--force", "--force", path); err != nil {
		// Not a registered work tree (any more): remove the folder itself.
		if rmErr := os.RemoveAll(path); rmErr != nil {
			return fmt.Errorf("removing %s: %w (after %v)", path, rmErr, err)
		}
		_, _ = Run(ctx, repoDir, "worktree", "prune")
	}
	return nil
}

// ChangedTracked lists the tracked files that differ from HEAD in dir
// (staged or not); untracked files are not counted.
func ChangedTracked(ctx context.Context, dir string) ([]string, error) {
	out, err := Run(ctx, dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 3 {
			files = append(files, strings.TrimSpace(l[3:]))
		}
	}
	return files, nil
}

// CommitAll stages every change in dir (new, changed and deleted files;
// ignored ones stay out) and commits it with msg. It reports whether a
// commit was made; a merge in progress is concluded by it.
func CommitAll(ctx context.Context, dir, msg string) (bool, error) {
	if _, err := Run(ctx, dir, "add", "--all"); err != nil {
		return false, err
	}
	merging := MergeInProgress(ctx, dir)
	if _, err := Run(ctx, dir, "diff", "--cached", "--quiet"); err == nil && !merging {
		return false, nil
	}
	if _, err := Run(ctx, dir, "commit", "--quiet", "--no-verify", "-m", msg); err != nil {
		return false, err
	}
	return true, nil
}

// MergeInProgress reports whether dir has a merge waiting to be concluded.
func MergeInProgress(ctx context.Context, dir string) bool {
	_, err := Run(ctx, dir, "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	return err == nil
}

// ConflictedFiles lists the files a merge left unresolved in dir.
func ConflictedFiles(ctx context.Context, dir string) []string {
	out, err := Run(ctx, dir, "diff", "--name-only", "--diff-filter=U")
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func IsAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := Run(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// ResetHard moves dir's branch and work tree to commit, dropping changes.
func ResetHard(ctx context.Context, dir, commit string) error {
	_, err := Run(ctx, dir, "reset", "--quiet", "--hard", commit)
	return err
}

// Files lists the tracked files at HEAD in dir.
func Files(ctx context.Context, dir string) ([]string, error) {
	out, err := Run(ctx, dir, "ls-files")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}
