package supervisor

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// sortedJobs returns the jobs oldest first; the caller holds s.mu.
func (s *Supervisor) sortedJobs() []*job {
	out := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].id < out[b].id })
	return out
}

// schedule makes one pass: readiness, launches, plans, reviews and the end
// of jobs. It reports whether no started job is left running.
func (s *Supervisor) schedule(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	now := s.clock.Now()
	live := false
	for _, j := range s.sortedJobs() {
		switch j.state {
		case JobCancelled:
			if s.cancelJobLocked(ctx, j) {
				live = true
			}
			continue
		case JobStarted:
		default:
			continue
		}
		live = true
		s.scheduleJob(ctx, j, now)
	}
	return !live && len(s.running) == 0
}

// busy counts the sessions and pipelines of a job; the caller holds s.mu.
func (s *Supervisor) busy(j *job) int {
	n := 0
	for t := range s.running {
		if t.job == j {
			n++
		}
	}
	if j.planning {
		n++
	}
	if j.reviewing {
		n++
	}
	return n
}

// planStale reports whether the job waits for a (re-)plan; the caller holds s.mu.
func planStale(j *job) bool {
	return j.replan || j.plannedRevision == 0 || j.revision > j.plannedRevision
}

// launchBlock says why no new session of the job may start now, or "".
func (s *Supervisor) launchBlock(j *job) string {
	switch {
	case s.paused.Paused:
		return fmt.Sprintf("paused by %s (%s)", s.paused.Who, s.paused.Channel)
	case j.hold != "":
		return fmt.Sprintf("the job is held: two tasks failed the same way (%s); retry one of them", j.hold)
	case s.proj.Budget.JobTokens > 0 && j.tokens >= s.proj.Budget.JobTokens:
		return fmt.Sprintf("the job is over its token budget (%d of %d tokens); raise budget.job_tokens in .ai/project.yaml", j.tokens, s.proj.Budget.JobTokens)
	}
	return ""
}

func (s *Supervisor) scheduleJob(ctx context.Context, j *job, now time.Time) {
	if planStale(j) {
		s.schedulePlan(ctx, j, now)
		if planStale(j) {
			return
		}
	}
	// Readiness: dependencies merged; dependents of a skipped task are cancelled.
	for _, t := range j.tasks {
		switch t.state {
		case Pending:
			ready, dead := true, ""
			for _, d := range t.spec.DependsOn {
				dep := j.byName[d]
				switch {
				case dep == nil:
					ready = false
				case dep.state == Skipped || dep.state == Cancelled:
					dead = d
				case dep.state != Merged:
					ready = false
				}
			}
			if dead != "" {
				_ = s.updateLocked(ctx, t, "state", fmt.Sprintf("cancelled: it depends on %s, which was %s", dead, j.byName[dead].state),
					func(t *task) { t.state = Cancelled }, nil)
			} else if ready {
				msg := "ready"
				if len(t.spec.DependsOn) > 0 {
					msg = "ready: its dependencies are merged"
				}
				_ = s.updateLocked(ctx, t, "state", msg, func(t *task) { t.state = Ready }, nil)
			}
		case Waiting:
			if !t.waitUntil.After(now) {
				_ = s.updateLocked(ctx, t, "state", "ready: the wait for the provider is over; checking again",
					func(t *task) { t.state, t.waitUntil = Ready, time.Time{} }, nil)
			}
		}
	}
	limit := j.maxWorkers
	if limit <= 0 {
		limit = s.proj.MaxWorkers
	}
	busy := s.busy(j)
	for _, t := range j.tasks {
		if t.state != Ready || s.running[t] != nil {
			continue
		}
		if busy >= limit {
			break
		}
		block := ""
		if t.step == stepBuild || t.step == stepReview {
			block = s.launchBlock(j)
			if block == "" {
				if until := s.rtWait[s.sessionRuntime(t)]; until.After(now) {
					block = fmt.Sprintf("runtime %s is out of quota until %s", s.sessionRuntime(t), until.Local().Format("15:04"))
				}
			}
		}
		if block != "" {
			if t.blocked != block {
				t.blocked = block
				s.emitLocked(ctx, j.name, t.name, "held", "not launched: "+block)
			}
			continue
		}
		s.launchLocked(ctx, t)
		busy++
	}
	s.scheduleEnd(ctx, j, busy)
}

// scheduleEnd finishes a job whose tasks are all done, after the final
// review when the workflow asks for one.
func (s *Supervisor) scheduleEnd(ctx context.Context, j *job, busy int) {
	if len(j.tasks) == 0 || busy > 0 {
		return
	}
	for _, t := range j.tasks {
		if !t.state.Terminal() {
			return
		}
	}
	if s.proj.Workflow.Review == "once" && j.finalReview != "passed" {
		if j.reviewing || j.problemID != 0 || j.reviewWait.After(s.clock.Now()) {
			return
		}
		if block := s.launchBlock(j); block != "" {
			if j.blocked != block {
				j.blocked = block
				s.emitLocked(ctx, j.name, "", "held", "final review not launched: "+block)
			}
			return
		}
		s.launchFinalReviewLocked(ctx, j)
		return
	}
	s.finishJobLocked(ctx, j)
}

// finishJobLocked marks the job done with the integration branch's head and
// owes the owner a job-done email.
func (s *Supervisor) finishJobLocked(ctx context.Context, j *job) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	head, err := git.Head(ctx, s.integrationDir())
	if err != nil {
		s.log.Error("reading the integration head", "err", err)
		return
	}
	merged, skipped, cancelled := 0, 0, 0
	for _, t := range j.tasks {
		switch t.state {
		case Merged:
			merged++
		case Skipped:
			skipped++
		case Cancelled:
			cancelled++
		}
	}
	branch := s.proj.IntegrationBranch
	msg := fmt.Sprintf("done: %d merged, %d skipped, %d cancelled; %s is at %s", merged, skipped, cancelled, branch, short(head))
	payload := s.jobDoneMail(ctx, j, branch, head)
	now := s.clock.Now()
	err = s.updateJobLocked(ctx, j, "job", msg, func(j *job) { j.head = head }, func(tx *sql.Tx, _ *Event) error {
		if _, err := tx.ExecContext(ctx, "UPDATE jobs SET state = 'done', finished_at = ? WHERE id = ? AND state = 'started'", state.Now(now), j.id); err != nil {
			return err
		}
		return s.store.EnqueueTx(ctx, tx, problems.OutboxJobDone, 0, 0, payload)
	})
	if err == nil {
		j.state = JobDone
	}
}

// cancelJobLocked stops a cancelled job's pipelines and cancels its
// unfinished tasks; it reports whether pipelines are still stopping.
func (s *Supervisor) cancelJobLocked(ctx context.Context, j *job) bool {
	live := false
	for t, cancel := range s.running {
		if t.job == j {
			cancel()
			live = true
		}
	}
	if j.planning || j.reviewing {
		live = true
	}
	if live {
		return true
	}
	for _, t := range j.tasks {
		if !t.state.Terminal() {
			_ = s.updateLocked(ctx, t, "state", "cancelled: the job was cancelled", func(t *task) { t.state = Cancelled }, nil)
		}
	}
	return false
}

// launchLocked starts a task's pipeline.
func (s *Supervisor) launchLocked(ctx context.Context, t *task) {
	tctx, cancel := context.WithCancel(ctx)
	s.running[t] = cancel
	t.blocked = ""
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.guard("task " + t.name)
		s.pipeline(tctx, t)
		cancel()
		s.mu.Lock()
		delete(s.running, t)
		if t.dropped && !t.state.Terminal() {
			_ = s.updateLocked(ctx, t, "state", "cancelled: the re-plan dropped it", func(t *task) { t.state = Cancelled }, nil)
		}
		if spec := t.nextSpec; spec != nil {
			t.nextSpec = nil
			_ = s.updateLocked(ctx, t, "", "", func(t *task) { t.spec = *spec }, nil)
		}
		s.mu.Unlock()
		s.kick()
	}()
}

// nextWake returns when the earliest wait ends, or zero.
func (s *Supervisor) nextWake() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, j := range s.jobs {
		if j.state != JobStarted {
			continue
		}
		consider(j.planWaitUntil)
		consider(j.reviewWait)
		for _, t := range j.tasks {
			if t.state == Waiting {
				consider(t.waitUntil)
			}
		}
	}
	for _, until := range s.rtWait {
		if until.After(s.clock.Now()) {
			consider(until)
		}
	}
	return next
}

// emitLocked records an event while s.mu is held.
func (s *Supervisor) emitLocked(ctx context.Context, jobName, taskName, kind, msg string) {
	s.emit(ctx, jobName, taskName, kind, msg)
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
