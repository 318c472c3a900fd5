package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

// MaxReviewRounds is how many times review findings go back to the builder
// before they become a problem.
const MaxReviewRounds = 3

// review runs a read-only reviewer session over the task's change
// (workflow.review: ai). Findings go back to the builder's own session up to
// MaxReviewRounds times; then they become a problem offering accept.
func (s *Supervisor) review(ctx context.Context, t *task) bool {
	jf, err := LoadJobFile(s.root, t.job.name)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.ReviewerFailed, summary: "could not read the job file for the review", detail: err.Error(), step: stepReview})
		return false
	}
	dir := TaskDir(s.root, t.name)
	start := time.Now()
	diff, err := git.Run(ctx, dir, "diff", t.base, t.head)
	s.timeGit(start)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.ReviewerFailed, summary: "could not show the reviewer the change", detail: err.Error(), step: stepReview})
		return false
	}
	s.mu.Lock()
	rt := s.reviewerRuntime()
	s.mu.Unlock()
	res := s.runSession(ctx, sessionSpec{job: t.job, task: t, step: stepReview, runtime: rt, role: runtimes.RoleReadOnly,
		dir: dir, prompt: reviewerBrief(jf, t.spec, diff), state: Reviewing,
		startMsg: fmt.Sprintf("reviewing: %s reviews %s", rt, short(t.head))})
	// The reviewer's session is its own; the builder's session id stays.
	switch {
	case res.interrupted:
		s.interrupted(ctx, t)
		return false
	case res.err == nil && waitClass(res.out.Class):
		s.wait(ctx, t, rt, res.out)
		return false
	case res.err != nil || res.out.Class != runtimes.ClassNone:
		f := sessionFailure("reviewer", res, stepReview)
		if f.kind == problems.Crashed || f.kind == problems.TimedOut {
			if !t.hasRetried("reviewer") {
				return s.update(ctx, t, "retry", f.summary+"; reviewing again once automatically", func(t *task) { t.markRetried("reviewer") }, nil) == nil
			}
			f.kind = problems.ReviewerFailed
		}
		s.stop(ctx, t, f)
		return false
	}
	report, ok := ParseReport(res.out.FinalText)
	if !ok || report.Verdict == "" {
		s.stop(ctx, t, failure{kind: problems.ReviewerFailed, summary: "the reviewer gave no verdict",
			detail:  "The reviewer's answer did not end with its verdict line. Reply retry to review again, accept to merge as it is, or skip.",
			logTail: res.out.FinalText, step: stepReview})
		return false
	}
	if report.Verdict == VerdictPass {
		return s.update(ctx, t, "reviewed", "reviewed: pass", func(t *task) { t.step = stepMerge }, nil) == nil
	}
	findings := formatFindings(report.Findings)
	if t.reviewRounds >= MaxReviewRounds {
		s.stop(ctx, t, failure{kind: problems.ReviewExhausted,
			summary: fmt.Sprintf("the reviewer still asks for changes after %d rounds", MaxReviewRounds),
			detail:  "Findings:\n" + findings + "\n\nReply accept to merge the reviewed commit once its gate passes again, retry for more review rounds, hint, skip or plan.",
			logTail: res.out.FinalText, step: stepReview})
		return false
	}
	return s.update(ctx, t, "reviewed", fmt.Sprintf("reviewed: changes asked (round %d of %d); back to the builder", t.reviewRounds+1, MaxReviewRounds),
		func(t *task) {
			t.reviewRounds++
			t.step = stepBuild
			t.reason = "The reviewer asks for changes:\n" + findings + "\nAddress every finding."
		}, nil) == nil
}

func formatFindings(fs []string) string {
	if len(fs) == 0 {
		return "- (the reviewer asked for changes without saying which)\n"
	}
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(f))
	}
	return b.String()
}
