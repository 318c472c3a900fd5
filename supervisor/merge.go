package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/problems"
)

// merge merges the task's checked commit into the integration branch in the
// integration work tree and runs the full gate on the merge. A conflict or a
// failing full gate is rolled back and becomes a problem.
func (s *Supervisor) merge(ctx context.Context, t *task) bool {
	waitStart := time.Now()
	if !s.lockMerge(ctx) {
		s.interrupted(ctx, t)
		return false
	}
	s.addStat(func(st *Stats) { st.MergeWait += time.Since(waitStart) })
	merged := s.mergeLocked(ctx, t)
	s.unlockMerge()
	if merged {
		// Removing the work tree needs no hold on the integration branch.
		s.removeTaskWorktree(context.WithoutCancel(ctx), t)
	}
	return false
}

// mergeLocked does the merge while the integration work tree is held and
// reports whether the task merged.
func (s *Supervisor) mergeLocked(ctx context.Context, t *task) bool {
	if why := s.stepBlock(t); why != "" {
		s.park(ctx, t, why)
		return false
	}
	integ, err := s.integration(ctx)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.MergeConflict, summary: "the integration work tree is not usable", detail: err.Error(), step: stepMerge})
		return false
	}
	s.mu.Lock()
	proj := s.proj
	s.mu.Unlock()
	start := time.Now()
	prev, err := git.Head(ctx, integ)
	s.timeGit(start)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.MergeConflict, summary: "could not read the integration branch", detail: err.Error(), step: stepMerge})
		return false
	}
	if err := s.update(ctx, t, "state", fmt.Sprintf("merging %s into %s", short(t.head), proj.IntegrationBranch), func(t *task) {
		t.state, t.mergeFrom = Merging, prev
	}, nil); err != nil {
		return false
	}
	// From here on a stop must leave the integration branch where it was.
	bg := context.WithoutCancel(ctx)
	rollback := func() {
		s.integChecked = false
		start := time.Now()
		if git.MergeInProgress(bg, integ) {
			_, _ = git.Run(bg, integ, "merge", "--abort")
		}
		if err := git.ResetHard(bg, integ, prev); err != nil {
			s.log.Error("rolling back the integration branch", "err", err)
		}
		s.timeGit(start)
	}
	start = time.Now()
	msg := fmt.Sprintf("agentkit: merge %s/%s: %s", t.job.name, t.name, titleOr(t.spec))
	_, mergeErr := git.Run(ctx, integ, "merge", "--no-ff", "--no-edit", "-m", msg, t.head)
	var conflicts []string
	if mergeErr != nil {
		conflicts = git.ConflictedFiles(bg, integ)
	}
	s.timeGit(start)
	if ctx.Err() != nil {
		rollback()
		s.interrupted(ctx, t)
		return false
	}
	if mergeErr != nil {
		rollback()
		summary := "merging into " + proj.IntegrationBranch + " failed"
		if len(conflicts) > 0 {
			summary = fmt.Sprintf("merging into %s conflicts in %s", proj.IntegrationBranch, strings.Join(conflicts, ", "))
		}
		s.stop(ctx, t, failure{kind: problems.MergeConflict, summary: summary, logTail: mergeErr.Error(), step: stepMerge,
			detail: fmt.Sprintf("The merge was rolled back; %s is unchanged at %s. Reply hint to have the builder bring its branch up to date and resolve it, retry after resolving it yourself, skip or plan.", proj.IntegrationBranch, short(prev))})
		return false
	}
	full := proj.Gates["full"]
	if len(full) > 0 {
		start := time.Now()
		res := RunGate(ctx, integ, "full", full, proj.GateTimeout.Or(DefaultGateTimeout), s.childEnv())
		s.addStat(func(st *Stats) { st.Gate += time.Since(start) })
		if ctx.Err() != nil {
			rollback()
			s.interrupted(ctx, t)
			return false
		}
		if !res.Passed {
			rollback()
			s.stop(ctx, t, failure{kind: problems.FullGateFailed, summary: "the full gate failed on the merge: " + res.Summary(),
				logTail: s.store.Redact(res.Output), step: stepMerge,
				detail: fmt.Sprintf("The merge was rolled back; %s is unchanged at %s. Reply hint to have the builder fix it with the integration branch merged into its work, retry after fixing the cause, skip or plan.", proj.IntegrationBranch, short(prev))})
			return false
		}
	}
	start = time.Now()
	merged, err := git.Head(bg, integ)
	s.timeGit(start)
	if err != nil {
		rollback()
		s.stop(ctx, t, failure{kind: problems.MergeConflict, summary: "could not read the merge", detail: err.Error(), step: stepMerge})
		return false
	}
	err = s.update(ctx, t, "merged", fmt.Sprintf("merged into %s as %s", proj.IntegrationBranch, short(merged)), func(t *task) {
		t.state, t.merged, t.mergeFrom, t.retried, t.reason = Merged, merged, "", "", ""
	}, nil)
	if err != nil {
		rollback()
		return false
	}
	s.addStat(func(st *Stats) { st.Merged++ })
	return true
}

// lockMerge takes the integration work tree, giving up when ctx ends.
func (s *Supervisor) lockMerge(ctx context.Context) bool {
	select {
	case s.mergeSem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Supervisor) unlockMerge() { <-s.mergeSem }

// integration returns the integration work tree for a merge: fully checked
// the first time and after any rollback, trusted while merges succeed (only
// merges, one at a time, write to it). The caller holds the merge lock.
func (s *Supervisor) integration(ctx context.Context) (string, error) {
	if s.integChecked {
		return s.integrationDir(), nil
	}
	dir, err := s.ensureIntegration(ctx)
	s.integChecked = err == nil
	return dir, err
}
