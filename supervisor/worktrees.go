package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentkit/agentkit/internal/git"
)

// IntegrationDir is the work tree where merges into the integration branch happen.
func IntegrationDir(root string) string {
	return filepath.Join(root, ".ai", "worktrees", "_integration")
}

// TaskDir is a writing task's work tree.
func TaskDir(root, task string) string { return filepath.Join(root, ".ai", "worktrees", task) }

// TaskBranch is a task's branch.
func TaskBranch(job, task string) string { return "agentkit/" + job + "/" + task }

func (s *Supervisor) integrationDir() string { return IntegrationDir(s.root) }

// lockRepo takes repoMu, counting the wait apart from git's own time (the
// caller's timeGit includes it, so it is taken off Git).
func (s *Supervisor) lockRepo() {
	start := time.Now()
	s.repoMu.Lock()
	wait := time.Since(start)
	s.addStat(func(st *Stats) { st.RepoWait += wait; st.Git -= wait })
}

// timeGit adds the time since start to the git statistics.
func (s *Supervisor) timeGit(start time.Time) {
	s.addStat(func(st *Stats) { st.Git += time.Since(start) })
}

// ensureIntegration makes sure the integration branch exists (from the
// owner's HEAD on first use) and is checked out in its own work tree, clean.
func (s *Supervisor) ensureIntegration(ctx context.Context) (string, error) {
	defer s.timeGit(time.Now())
	branch := s.project().IntegrationBranch
	s.lockRepo()
	defer s.repoMu.Unlock()
	dir := s.integrationDir()
	if !git.BranchExists(ctx, s.root, branch) {
		if err := git.CreateBranch(ctx, s.root, branch, "HEAD"); err != nil {
			return "", fmt.Errorf("creating the integration branch %s: %w", branch, err)
		}
	}
	if !git.IsWorktree(ctx, s.root, dir) {
		if cur := git.CurrentBranch(ctx, s.root); cur == branch {
			return "", fmt.Errorf("your checkout has %s checked out; agentkit merges into it in its own work tree, so switch your checkout to another branch", branch)
		}
		_ = os.RemoveAll(dir)
		if err := git.AddWorktree(ctx, s.root, dir, branch, ""); err != nil {
			return "", fmt.Errorf("creating the integration work tree %s: %w", dir, err)
		}
	}
	if cur := git.CurrentBranch(ctx, dir); cur != branch {
		return "", fmt.Errorf("the integration work tree %s has %q checked out, not %s; remove it (git worktree remove --force %s) and start again", dir, cur, branch, dir)
	}
	if git.MergeInProgress(ctx, dir) {
		if _, err := git.Run(ctx, dir, "merge", "--abort"); err != nil {
			return "", fmt.Errorf("rolling back a half-done merge in %s: %w", dir, err)
		}
	}
	if changed, err := git.ChangedTracked(ctx, dir); err == nil && len(changed) > 0 {
		if err := git.ResetHard(ctx, dir, "HEAD"); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ensureTaskWorktree makes sure a writing task has its work tree and branch,
// made from the integration branch, and records the commit it started from.
func (s *Supervisor) ensureTaskWorktree(ctx context.Context, t *task) (string, error) {
	dir := TaskDir(s.root, t.name)
	branch := TaskBranch(t.job.name, t.name)
	made, base, err := s.addTaskWorktree(ctx, dir, branch)
	if err != nil {
		return "", fmt.Errorf("creating the work tree of task %s: %w", t.name, err)
	}
	// The store is written after repoMu is released: s.mu is never taken under it.
	if made {
		err = s.update(ctx, t, "worktree", fmt.Sprintf("work tree %s on branch %s from %s", relPath(s.root, dir), branch, short(base)),
			func(t *task) {
				if t.base == "" {
					t.base = base
				}
			}, nil)
	} else if t.base == "" {
		err = s.update(ctx, t, "", "", func(t *task) { t.base = base }, nil)
	}
	return dir, err
}

// addTaskWorktree checks the task's branch out at dir, creating the branch
// from the integration branch when it is new. It reports whether it made the
// work tree, and the commit the work tree is at.
func (s *Supervisor) addTaskWorktree(ctx context.Context, dir, branch string) (bool, string, error) {
	defer s.timeGit(time.Now())
	integration := s.project().IntegrationBranch
	s.lockRepo()
	made := false
	if git.IsWorktree(ctx, s.root, dir) {
		if cur := git.CurrentBranch(ctx, dir); cur != branch {
			s.repoMu.Unlock()
			return false, "", fmt.Errorf("%s is the work tree of %q, not of this task; run agentkit job clean for the job that owns it", dir, cur)
		}
	} else {
		var err error
		if git.BranchExists(ctx, s.root, branch) {
			err = git.AddWorktree(ctx, s.root, dir, branch, "")
		} else {
			err = git.AddWorktree(ctx, s.root, dir, branch, integration)
		}
		if err != nil {
			s.repoMu.Unlock()
			return false, "", err
		}
		made = true
	}
	s.repoMu.Unlock()
	base, err := git.Head(ctx, dir)
	return made, base, err
}

// removeTaskWorktree removes a task's work tree; its branch stays until
// agentkit job clean.
func (s *Supervisor) removeTaskWorktree(ctx context.Context, t *task) {
	defer s.timeGit(time.Now())
	s.lockRepo()
	defer s.repoMu.Unlock()
	if err := git.RemoveWorktree(ctx, s.root, TaskDir(s.root, t.name)); err != nil {
		s.log.Warn("removing a merged task's work tree", "task", t.name, "err", err)
	}
}

func relPath(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}
