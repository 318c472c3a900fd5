package supervisor

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/problems"
)

// applyDecisions applies the repository's answered, not yet applied
// decisions, each in one transaction with the state it changes.
func (s *Supervisor) applyDecisions(ctx context.Context) error {
	pending, err := s.store.Pending(ctx, s.repo.Name)
	if err != nil {
		return err
	}
	for _, p := range pending {
		s.mu.Lock()
		s.applyLocked(ctx, p)
		s.mu.Unlock()
	}
	return nil
}

func (s *Supervisor) jobByName(name string) *job {
	for _, j := range s.jobs {
		if j.name == name {
			return j
		}
	}
	return nil
}

// markOnly records a decision's outcome without changing any task.
func (s *Supervisor) markOnly(ctx context.Context, p *problems.Problem, outcome string) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		return s.store.MarkAppliedTx(ctx, tx, p.Decision.ID, outcome)
	})
	if err != nil {
		s.log.Error("marking a decision applied", "code", p.Code, "err", err)
	}
}

func (s *Supervisor) applyLocked(ctx context.Context, p *problems.Problem) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	d := p.Decision
	j := s.jobByName(p.Job)
	if j == nil || j.state != JobStarted {
		st := "not running"
		if j != nil {
			st = string(j.state)
		} else {
			var dbState string
			if err := s.db.QueryRowContext(ctx, "SELECT state FROM jobs WHERE repo = ? AND name = ?", s.repo.Name, p.Job).Scan(&dbState); err == nil {
				if dbState == string(JobCreated) {
					return // applied once the job starts
				}
				st = dbState
			}
		}
		s.markOnly(ctx, p, fmt.Sprintf("nothing done: job %s is %s", p.Job, st))
		return
	}
	if p.Task == "" {
		s.applyJobLocked(ctx, j, p)
		return
	}
	t := j.byName[p.Task]
	if t == nil || t.problemID != p.ID() || t.state != Stopped || s.running[t] != nil {
		st := "gone"
		if t != nil {
			st = string(t.state)
		}
		s.markOnly(ctx, p, fmt.Sprintf("nothing done: task %s is %s", p.Task, st))
		return
	}
	words := d.Words
	var outcome string
	var mutate func(t *task)
	var after func()
	ready := func(t *task) {
		t.state, t.problemID, t.setupSig, t.retried, t.waits, t.blocked = Ready, 0, "", "", 0, ""
	}
	switch d.Reply {
	case problems.Retry:
		outcome, mutate = s.retryLocked(t, p)
	case problems.Accept:
		outcome = "the reviewed commit is merged once its task gate passes again"
		mutate = func(t *task) { ready(t); t.step = stepAccept }
	case problems.Dismiss:
		outcome = "the builder continues within the task's own paths"
		mutate = func(t *task) {
			ready(t)
			t.step = stepBuild
			t.reason = "The owner declined your request for more files. Finish the task within the paths you own; if that is impossible, report needs_files again and say why."
		}
	case problems.Hint:
		outcome, mutate = s.hintLocked(ctx, t, p, words)
	case problems.Skip:
		deps := dependents(j, t.name)
		outcome = "task skipped"
		if len(deps) > 0 {
			outcome += "; cancelled the tasks that depend on it: " + strings.Join(deps, ", ")
		}
		mutate = func(t *task) { t.state, t.problemID, t.setupSig = Skipped, 0, "" }
	case problems.Plan:
		outcome = "the job is re-planned with your words"
		mutate = func(t *task) {
			t.state, t.problemID, t.setupSig = Pending, 0, ""
			t.step, t.reason, t.session, t.retried, t.head, t.base, t.reviewRounds, t.waits = stepBuild, "", "", "", "", "", 0, 0
			t.job.replan, t.job.planWords = true, words
		}
		after = func() {
			s.recordPlanWords(j, d.Who, words)
			s.resetBranch(ctx, t)
		}
	default:
		s.markOnly(ctx, p, fmt.Sprintf("nothing done: %s is not a reply agentkit applies", d.Reply))
		return
	}
	sig := t.setupSig
	lift := false
	if j.hold != "" && sig == j.hold {
		switch d.Reply {
		case problems.Retry, problems.Hint, problems.Plan:
			lift = true
		default:
			lift = s.sharing(j, sig, t) < 1
		}
	}
	if lift {
		outcome += "; the job's hold is lifted"
	}
	reply := problems.Reply{Verb: d.Reply, Words: d.Words}.String()
	err := s.updateLocked(ctx, t, "decision", fmt.Sprintf("decision on %s: %q by %s (%s): %s", p.Code, reply, d.Who, d.Channel, outcome),
		func(t *task) {
			mutate(t)
			if lift {
				t.job.hold = ""
			}
		}, func(tx *sql.Tx, _ *Event) error { return s.store.MarkAppliedTx(ctx, tx, d.ID, outcome) })
	if err == nil && after != nil {
		after()
	}
}

// sharing counts the other stopped tasks of the job with the setup signature.
func (s *Supervisor) sharing(j *job, sig string, except *task) int {
	n := 0
	for _, o := range j.tasks {
		if o != except && o.state == Stopped && o.setupSig == sig {
			n++
		}
	}
	return n
}

// retryLocked says what retry does for the task's problem.
func (s *Supervisor) retryLocked(t *task, p *problems.Problem) (string, func(*task)) {
	ready := func(t *task) {
		t.state, t.problemID, t.setupSig, t.retried, t.waits, t.blocked = Ready, 0, "", "", 0, ""
	}
	switch p.Kind {
	case problems.GateFailed:
		return "the task gate runs again", func(t *task) { ready(t); t.step, t.fresh = stepCheck, true }
	case problems.ReviewExhausted:
		return "the reviewer reviews again, with up to 3 more rounds", func(t *task) { ready(t); t.step, t.reviewRounds = stepReview, 0 }
	case problems.ReviewerFailed:
		return "the reviewer runs again", func(t *task) { ready(t); t.step = stepReview }
	case problems.MergeConflict, problems.FullGateFailed:
		return "the merge runs again", func(t *task) { ready(t); t.step = stepMerge }
	case problems.HumanReview:
		return "the builder works on the change again", func(t *task) {
			ready(t)
			t.step, t.reason = stepBuild, "The owner reviewed your change and asks you to improve it. Look at it again with fresh eyes and make it better."
		}
	case problems.Unchanged:
		return "the builder runs again", func(t *task) {
			ready(t)
			t.step, t.reason = stepBuild, "Your last session changed no file, but the task needs changes. Do the task now."
		}
	}
	return "the builder runs again", func(t *task) {
		ready(t)
		t.step = stepBuild
		if t.session != "" && t.reason == "" {
			t.reason = fmt.Sprintf("The owner fixed what stopped you (%s). Continue the task.", p.Summary)
		}
	}
}

// hintLocked says what hint does: the builder's own session continues with
// the words. After a failed merge the integration branch is first merged
// into the task's work tree, so the builder sees what it must fix.
func (s *Supervisor) hintLocked(ctx context.Context, t *task, p *problems.Problem, words string) (string, func(*task)) {
	reason := fmt.Sprintf("The owner's hint: %s\n\n(What stopped you: %s)", words, p.Summary)
	if p.Kind == problems.MergeConflict || p.Kind == problems.FullGateFailed {
		reason += "\n\n" + s.catchUp(ctx, t, p)
	}
	outcome := "the builder's session continues with your hint"
	if t.session != "" {
		outcome = fmt.Sprintf("the builder's session %s continues with your hint", t.session)
	}
	return outcome, func(t *task) {
		t.state, t.problemID, t.setupSig, t.retried, t.waits, t.blocked = Ready, 0, "", "", 0, ""
		t.step, t.reason = stepBuild, reason
	}
}

// catchUp merges the integration branch into the task's work tree, leaving
// conflicts for the builder, and says what happened.
func (s *Supervisor) catchUp(ctx context.Context, t *task, p *problems.Problem) string {
	dir := TaskDir(s.root, t.name)
	branch := s.proj.IntegrationBranch
	start := time.Now()
	defer s.timeGit(start)
	_, err := git.Run(ctx, dir, "merge", "--no-edit", "-m", "agentkit: bring "+branch+" into "+t.name, branch)
	if err == nil {
		msg := fmt.Sprintf("agentkit merged %s into your work tree.", branch)
		if p.Kind == problems.FullGateFailed {
			msg += " The full gate failed on the combination:\n\n" + p.LogTail + "\n\nMake it pass."
		}
		return msg
	}
	files := git.ConflictedFiles(ctx, dir)
	if len(files) == 0 {
		return fmt.Sprintf("Your branch does not merge into %s (%v); bring it up to date with %s.", branch, err, branch)
	}
	return fmt.Sprintf("agentkit started merging %s into your work tree; it conflicts in %s. Resolve the conflicts (remove every conflict marker); agentkit commits the merge when you are done.",
		branch, strings.Join(files, ", "))
}

// dependents lists the tasks that depend on name, directly or not.
func dependents(j *job, name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, t := range j.tasks {
			if seen[t.name] || t.state.Terminal() {
				continue
			}
			for _, d := range t.spec.DependsOn {
				if d == cur {
					seen[t.name] = true
					out = append(out, t.name)
					queue = append(queue, t.name)
					break
				}
			}
		}
	}
	return out
}

// resetBranch removes a task's work tree and branch, so it starts afresh
// from the integration branch.
func (s *Supervisor) resetBranch(ctx context.Context, t *task) {
	defer s.timeGit(time.Now())
	s.lockRepo()
	defer s.repoMu.Unlock()
	_ = git.RemoveWorktree(ctx, s.root, TaskDir(s.root, t.name))
	if b := TaskBranch(t.job.name, t.name); git.BranchExists(ctx, s.root, b) {
		_ = git.DeleteBranch(ctx, s.root, b)
	}
}

// recordPlanWords keeps a plan reply's words in the job file as one of the
// owner's decisions for the job.
func (s *Supervisor) recordPlanWords(j *job, who, words string) {
	jf, err := LoadJobFile(s.root, j.name)
	if err != nil {
		s.log.Warn("recording plan words in the job file", "err", err)
		return
	}
	jf.Decisions = append(jf.Decisions, Decision{At: s.clock.Now().UTC(), Who: who, Words: words})
	if err := writeJobFile(s.root, jf); err != nil {
		s.log.Warn("recording plan words in the job file", "err", err)
	}
}

// applyJobLocked applies a decision on a job's own problem: its plan, or its
// final review.
func (s *Supervisor) applyJobLocked(ctx context.Context, j *job, p *problems.Problem) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	d := p.Decision
	if j.problemID != p.ID() {
		s.markOnly(ctx, p, "nothing done: the job has moved on")
		return
	}
	final := j.finalReview == "stopped"
	var outcome string
	var mutate func(j *job)
	var after func()
	switch {
	case d.Reply == problems.Plan:
		outcome = "the job is re-planned with your words"
		mutate = func(j *job) {
			j.replan, j.planWords, j.planHint = true, d.Words, false
			if final {
				j.finalReview, j.reviewRounds = "", 0
			}
		}
		after = func() { s.recordPlanWords(j, d.Who, d.Words) }
	case final && d.Reply == problems.Retry:
		outcome = "the final review runs again"
		mutate = func(j *job) { j.finalReview, j.reviewRounds = "", 0 }
	case final && (d.Reply == problems.Accept || d.Reply == problems.Skip):
		outcome = "the final review is settled; the job finishes"
		mutate = func(j *job) { j.finalReview = "passed" }
	case final && d.Reply == problems.Hint:
		outcome = "a follow-up task addresses the findings with your hint"
		mutate = func(j *job) { j.finalReview = "" }
		after = func() {
			s.addFixTaskLocked(ctx, j, j.reviewRounds+1, p.Detail+"\n\nThe owner's hint: "+d.Words)
		}
	case d.Reply == problems.Retry:
		outcome = "the plan step runs again"
		mutate = func(j *job) { j.planRetried = false }
	case d.Reply == problems.Hint:
		outcome = "the coordinator continues with your hint"
		mutate = func(j *job) { j.replan, j.planWords, j.planHint, j.planRetried = true, d.Words, true, false }
	default:
		s.markOnly(ctx, p, fmt.Sprintf("nothing done: %s does not apply to the job's problem", d.Reply))
		return
	}
	reply := problems.Reply{Verb: d.Reply, Words: d.Words}.String()
	err := s.updateJobLocked(ctx, j, "decision", fmt.Sprintf("decision on %s: %q by %s (%s): %s", p.Code, reply, d.Who, d.Channel, outcome),
		func(j *job) {
			j.problemID = 0
			mutate(j)
		}, func(tx *sql.Tx, _ *Event) error { return s.store.MarkAppliedTx(ctx, tx, d.ID, outcome) })
	if err == nil && after != nil {
		after()
	}
}
