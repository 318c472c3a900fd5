package supervisor

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

// launchFinalReviewLocked starts the review of a job's combined change
// (workflow.review: once). The caller holds s.mu.
func (s *Supervisor) launchFinalReviewLocked(ctx context.Context, j *job) {
	j.reviewing, j.blocked = true, ""
	round := j.reviewRounds + 1
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.guard("the final review of job " + j.name)
		s.runFinalReview(ctx, j, round)
		s.mu.Lock()
		j.reviewing = false
		s.mu.Unlock()
		s.kick()
	}()
}

// runFinalReview runs one reviewer session over everything the job merged.
// Findings become one fix task, reviewed again, up to MaxReviewRounds rounds.
func (s *Supervisor) runFinalReview(ctx context.Context, j *job, round int) {
	integ := s.integrationDir()
	jf, err := LoadJobFile(s.root, j.name)
	var diff string
	if err == nil {
		start := time.Now()
		diff, err = git.Run(ctx, integ, "diff", j.base, "HEAD")
		s.timeGit(start)
	}
	if err != nil {
		s.mu.Lock()
		s.finalProblemLocked(ctx, j, failure{kind: problems.ReviewerFailed, summary: "could not prepare the final review", detail: err.Error()})
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	rt := s.reviewerRuntime()
	s.mu.Unlock()
	res := s.runSession(ctx, sessionSpec{job: j, step: "final_review", runtime: rt, role: runtimes.RoleReadOnly, dir: integ,
		prompt:   finalReviewBrief(jf, diff, round),
		startMsg: fmt.Sprintf("final review: %s reviews the combined change (round %d)", rt, round)})
	s.mu.Lock()
	defer s.mu.Unlock()
	out := res.out
	switch {
	case res.interrupted:
		return
	case res.err == nil && waitClass(out.Class):
		j.reviewWait = s.waitUntil(out, 0)
		s.emitLocked(ctx, j.name, "", "wait", fmt.Sprintf("the final review waits until %s (%s: %s); no attempt used", j.reviewWait.Local().Format("2006-01-02 15:04"), out.Class, out.Message))
		return
	case res.err != nil || out.Class != runtimes.ClassNone:
		f := sessionFailure("final reviewer", res, "")
		f.kind = problems.ReviewerFailed
		s.finalProblemLocked(ctx, j, f)
		return
	}
	report, ok := ParseReport(out.FinalText)
	switch {
	case !ok || report.Verdict == "":
		s.finalProblemLocked(ctx, j, failure{kind: problems.ReviewerFailed, summary: "the final reviewer gave no verdict",
			detail: "Reply retry to review again, accept to finish the job as it is, or skip the review.", logTail: out.FinalText})
	case report.Verdict == VerdictPass:
		_ = s.updateJobLocked(ctx, j, "reviewed", fmt.Sprintf("final review: pass (round %d)", round), func(j *job) { j.finalReview = "passed" }, nil)
	case j.reviewRounds >= MaxReviewRounds:
		s.finalProblemLocked(ctx, j, failure{kind: problems.ReviewExhausted,
			summary: fmt.Sprintf("the final review still asks for changes after %d rounds", MaxReviewRounds),
			detail:  "Findings:\n" + formatFindings(report.Findings) + "\nReply accept to finish the job as it is, retry for more rounds, hint to add a fix task with your words, skip the review, or plan.",
			logTail: out.FinalText})
	default:
		_ = s.updateJobLocked(ctx, j, "reviewed", fmt.Sprintf("final review: changes asked (round %d of %d); a fix task follows", round, MaxReviewRounds),
			func(j *job) { j.reviewRounds++ }, nil)
		s.addFixTaskLocked(ctx, j, round, "The final review of the job found:\n"+formatFindings(report.Findings))
	}
}

// finalProblemLocked stops the final review with a job-level problem.
func (s *Supervisor) finalProblemLocked(ctx context.Context, j *job, f failure) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	_ = s.updateJobLocked(ctx, j, "problem", "", func(j *job) { j.finalReview = "stopped" }, func(tx *sql.Tx, e *Event) error {
		code, id, err := s.createProblem(ctx, tx, j.name, "", f, nil)
		if err != nil {
			return err
		}
		j.problemID = id
		e.Message = fmt.Sprintf("stopped: problem %s (%s): %s", code, f.kind, f.summary)
		return nil
	})
}

// addFixTaskLocked adds the task that addresses a final review's findings.
func (s *Supervisor) addFixTaskLocked(ctx context.Context, j *job, round int, findings string) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	name := fmt.Sprintf("%s-review-%d", j.name, round)
	for j.byName[name] != nil {
		name += "x"
	}
	seq := 0
	for _, t := range j.tasks {
		seq = max(seq, t.seq+1)
	}
	t := &task{job: j, name: name, seq: seq, state: Pending, step: stepBuild, spec: Task{
		ID: name, JobID: j.name, Kind: Dependent,
		Title:       fmt.Sprintf("Address the final review's findings (round %d)", round),
		Description: strings.TrimSpace(findings),
		Acceptance:  []string{"Every finding of the review is addressed."},
	}}
	now := s.clock.Now()
	e := &Event{Repo: s.repo.Name, Job: j.name, Task: name, At: now, Kind: "plan", Message: "added: the fix task of final review round " + fmt.Sprint(round)}
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if err := insertTask(ctx, tx, j, t, now); err != nil {
			return err
		}
		return insertEvent(ctx, tx, e)
	})
	if err != nil {
		s.log.Error("adding a fix task", "job", j.name, "err", err)
		return
	}
	j.tasks = append(j.tasks, t)
	j.byName[name] = t
	s.published(e)
}
