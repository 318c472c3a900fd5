package supervisor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// check runs the task gate on the task's commit; accepted is set when the
// owner accepted the reviewed commit (the gate runs afresh, then the merge).
func (s *Supervisor) check(ctx context.Context, t *task, accepted bool) bool {
	s.mu.Lock()
	proj := s.proj
	fresh := t.fresh || accepted
	s.mu.Unlock()
	level := gateLevel(t.spec, proj.Gates)
	dir := TaskDir(s.root, t.name)
	if !git.IsWorktree(ctx, s.root, dir) {
		// The work tree is gone (removed by hand): build it again from its branch.
		if _, err := s.ensureTaskWorktree(ctx, t); err != nil {
			s.stop(ctx, t, failure{kind: problems.Crashed, summary: "the task's work tree is gone and could not be made again", detail: err.Error(), step: stepCheck})
			return false
		}
	}
	if err := s.update(ctx, t, "state", fmt.Sprintf("checking: gate %s on %s", orNone(level), short(t.head)), func(t *task) {
		t.state, t.fresh = Checking, false
	}, nil); err != nil {
		return false
	}
	res := s.gate(ctx, t, dir, level, proj.Gates[level], proj.GateTimeout.Or(DefaultGateTimeout), fresh)
	if ctx.Err() != nil {
		s.interrupted(ctx, t)
		return false
	}
	if res.Passed {
		next, msg := stepMerge, "checked: "+res.Summary()
		if res.Cached {
			msg += " (cached for this commit)"
		}
		switch {
		case accepted:
			msg += "; the owner accepted the commit, merging"
		case proj.Workflow.Review == "ai":
			next = stepReview
		case proj.Workflow.Review == "human":
			s.stop(ctx, t, failure{kind: problems.HumanReview,
				summary: fmt.Sprintf("task %s is ready for your review", t.name),
				detail: fmt.Sprintf("%s passed its gate. Look at the change with: git -C %s diff %s %s\nReply accept to merge it, retry or hint to have the builder change it, or skip.",
					titleOr(t.spec), s.root, short(t.base), short(t.head)),
				step: stepAccept})
			return false
		}
		return s.update(ctx, t, "checked", msg, func(t *task) { t.step = next }, nil) == nil
	}
	f := failure{kind: problems.GateFailed, summary: res.Summary(), logTail: res.Output, step: stepCheck,
		detail: fmt.Sprintf("The task gate %s failed on commit %s, after the builder had one more try with the gate's output.", orNone(level), short(t.head))}
	if accepted {
		f.detail = fmt.Sprintf("You accepted commit %s, but the task gate %s no longer passes on it.", short(t.head), orNone(level))
		s.stop(ctx, t, f)
		return false
	}
	reason := fmt.Sprintf("The task gate %s failed on your work:\n\n%s\n\nFix the cause.", orNone(level), res.Output)
	return s.retryOnce(ctx, t, f, reason)
}

// gate runs one gate level in dir for the task, using a passing result
// cached for the same commit unless fresh is set.
func (s *Supervisor) gate(ctx context.Context, t *task, dir, level string, commands []string, timeout time.Duration, fresh bool) GateResult {
	if level == "" || len(commands) == 0 {
		return GateResult{Level: orNone(level), Passed: true}
	}
	if !fresh {
		var at string
		err := s.db.QueryRowContext(ctx, "SELECT at FROM gate_results WHERE repo = ? AND job = ? AND task = ? AND level = ? AND head = ? AND exit_code = 0",
			s.repo.Name, t.job.name, t.name, level, t.head).Scan(&at)
		if err == nil {
			return GateResult{Level: level, Passed: true, Cached: true}
		} else if !errors.Is(err, sql.ErrNoRows) {
			s.log.Warn("reading the gate cache", "err", err)
		}
	}
	start := time.Now()
	res := RunGate(ctx, dir, level, commands, timeout, s.childEnv())
	s.addStat(func(st *Stats) { st.Gate += time.Since(start) })
	res.Output = s.store.Redact(res.Output)
	if res.Passed && ctx.Err() == nil {
		_, err := s.db.ExecContext(ctx, `INSERT INTO gate_results (repo, job, task, level, head, exit_code, output, at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)
			ON CONFLICT DO UPDATE SET exit_code = 0, output = excluded.output, at = excluded.at`,
			s.repo.Name, t.job.name, t.name, level, t.head, res.Output, state.Now(s.clock.Now()))
		if err != nil {
			s.log.Warn("caching a gate result", "err", err)
		}
	}
	return res
}

func orNone(level string) string {
	if level == "" {
		return "(none)"
	}
	return level
}
