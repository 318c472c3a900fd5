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

// stepAccept runs the task gate afresh and merges without another review:
// the owner accepted the reviewed commit.
const stepAccept = "accept"

// pipeline runs a task's steps from its current one until it merges, stops
// with a problem, waits for its provider, or may not go on.
func (s *Supervisor) pipeline(ctx context.Context, t *task) {
	start := time.Now()
	defer func() { s.addStat(func(st *Stats) { st.Pipeline += time.Since(start) }) }()
	for {
		if ctx.Err() != nil {
			s.interrupted(ctx, t)
			return
		}
		if why := s.stepBlock(t); why != "" {
			s.park(ctx, t, why)
			return
		}
		var next bool
		switch t.step {
		case stepBuild:
			next = s.build(ctx, t)
		case stepCheck:
			next = s.check(ctx, t, false)
		case stepAccept:
			next = s.check(ctx, t, true)
		case stepReview:
			next = s.review(ctx, t)
		case stepMerge:
			next = s.merge(ctx, t)
		default:
			s.log.Error("unknown task step", "task", t.name, "step", t.step)
			return
		}
		if !next {
			return
		}
	}
}

// stepBlock says why the task's next step may not run now, or "".
func (s *Supervisor) stepBlock(t *task) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return "agentkit is stopping; it continues when the supervisor starts again"
	}
	switch t.step {
	case stepBuild, stepReview:
		if planStale(t.job) {
			return "the job waits for its re-plan"
		}
		return s.launchBlock(t.job)
	case stepMerge:
		if planStale(t.job) {
			return "the job waits for its re-plan"
		}
	}
	return ""
}

// sessionRuntime names the runtime of the task's next session.
func (s *Supervisor) sessionRuntime(t *task) string {
	if t.step == stepReview {
		return s.reviewerRuntime()
	}
	if t.spec.Runtime != "" {
		return t.spec.Runtime
	}
	return s.proj.Runtimes.Default
}

func (s *Supervisor) reviewerRuntime() string {
	if s.proj.Runtimes.Reviewer != "" {
		return s.proj.Runtimes.Reviewer
	}
	return s.proj.Runtimes.Default
}

// gateLevel is the task's gate level: its own, else fast when defined.
func gateLevel(t Task, gates map[string][]string) string {
	if t.GateLevel != "" {
		return t.GateLevel
	}
	if _, ok := gates["fast"]; ok {
		return "fast"
	}
	return ""
}

// build runs the builder's session, reads its report, and commits its work.
func (s *Supervisor) build(ctx context.Context, t *task) bool {
	jf, err := LoadJobFile(s.root, t.job.name)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.Crashed, summary: "could not read the job file", detail: err.Error(), step: stepBuild})
		return false
	}
	dir := s.root
	if !t.spec.Kind.ReadOnly() {
		if dir, err = s.ensureTaskWorktree(ctx, t); err != nil {
			s.stop(ctx, t, failure{kind: problems.Crashed, summary: "could not prepare the task's work tree", detail: err.Error(), step: stepBuild})
			return false
		}
	}
	var before string
	if !t.spec.Kind.ReadOnly() {
		start := time.Now()
		before, err = git.Head(ctx, dir)
		s.timeGit(start)
		if err != nil {
			s.stop(ctx, t, failure{kind: problems.Crashed, summary: "could not read the task's work tree", detail: err.Error(), step: stepBuild})
			return false
		}
	}
	s.mu.Lock()
	proj := s.proj
	rtName := s.sessionRuntime(t)
	deps := map[string]string{}
	for _, d := range t.spec.DependsOn {
		if dt := t.job.byName[d]; dt != nil && dt.result != "" {
			deps[d] = dt.result
		}
	}
	s.mu.Unlock()
	gate := gateCommands(proj, gateLevel(t.spec, proj.Gates))
	sp := sessionSpec{job: t.job, task: t, step: stepBuild, runtime: rtName, role: runtimes.RoleWriter, dir: dir, state: Building}
	if t.spec.Kind.ReadOnly() {
		sp.role = runtimes.RoleReadOnly
	}
	switch {
	case t.reason != "" && t.session != "":
		sp.resume, sp.session = true, t.session
		sp.prompt = resumeBrief(t.spec, gate, t.reason)
		sp.startMsg = fmt.Sprintf("building: %s resumes session %s (%s)", rtName, t.session, firstLine(t.reason))
	default:
		sp.session = t.session
		if t.runtime != "" && t.runtime != rtName {
			sp.session = ""
		}
		sp.prompt = builderBrief(jf, t.spec, gate, deps, t.reason)
		sp.startMsg = fmt.Sprintf("building: %s starts a session", rtName)
	}
	res := s.runSession(ctx, sp)
	switch {
	case res.interrupted:
		s.interrupted(ctx, t)
		return false
	case res.err != nil:
		return s.retryOnce(ctx, t, sessionFailure("builder", res, stepBuild), "")
	case waitClass(res.out.Class):
		s.wait(ctx, t, rtName, res.out)
		return false
	case res.out.Class == runtimes.ClassAuth || res.out.Class == runtimes.ClassModelUnavailable:
		s.stop(ctx, t, sessionFailure("builder", res, stepBuild))
		return false
	case res.out.Class == runtimes.ClassCrash || res.out.Class == runtimes.ClassTimeout:
		f := sessionFailure("builder", res, stepBuild)
		what := "crashed"
		if res.out.Class == runtimes.ClassTimeout {
			what = "ran out of time"
		}
		reason := fmt.Sprintf("Your previous session %s (%s). Continue the task where you left off.", what, res.out.Message)
		if s.retryOnce(ctx, t, f, reason) {
			_ = s.update(ctx, t, "", "", func(t *task) { t.session = res.out.SessionID }, nil)
			return true
		}
		return false
	}
	report, _ := ParseReport(res.out.FinalText)
	switch report.Status {
	case StatusSetupFailed:
		cause := report.Reason
		if strings.TrimSpace(cause) == "" {
			cause = "no reason given"
		}
		s.stop(ctx, t, failure{kind: problems.SetupFailed, summary: "the builder could not set up: " + firstLine(cause),
			detail: cause, logTail: res.out.FinalText, step: stepBuild, cause: cause})
		return false
	case StatusNeedsFiles:
		s.stop(ctx, t, failure{kind: problems.ScopeRequest,
			summary: fmt.Sprintf("the builder asks for more files: %s", strings.Join(report.Paths, ", ")),
			detail:  fmt.Sprintf("%s\n\nReply plan (with words) to re-plan with the wider scope, dismiss to keep the task's paths, or skip.", report.Reason),
			logTail: res.out.FinalText, step: stepBuild})
		return false
	}
	if t.spec.Kind.ReadOnly() {
		result := capText(strings.TrimSpace(res.out.FinalText), 8000)
		_ = s.update(ctx, t, "state", "merged: the research is done; its result goes to the tasks that depend on it", func(t *task) {
			t.state, t.result, t.reason, t.waits, t.retried = Merged, result, "", 0, ""
		}, nil)
		s.addStat(func(st *Stats) { st.Merged++ })
		return false
	}
	start := time.Now()
	_, err = git.CommitAll(ctx, dir, fmt.Sprintf("agentkit: %s/%s: %s", t.job.name, t.name, titleOr(t.spec)))
	var after string
	if err == nil {
		after, err = git.Head(ctx, dir)
	}
	s.timeGit(start)
	if err != nil {
		s.stop(ctx, t, failure{kind: problems.Crashed, summary: "could not commit the builder's work", detail: err.Error(), step: stepBuild})
		return false
	}
	if after == before && t.head == after && t.hasRetried(string(problems.GateFailed)) {
		// Shown the gate's failure, the builder found nothing to change in its
		// work: the cause may lie outside it (a service down, a file only the
		// owner can fix). The gate decides again; if it fails, the problem is
		// gate_failed, whose retry re-runs the gate once the cause is fixed.
		return s.update(ctx, t, "built", fmt.Sprintf("built: nothing changed since the failed gate; checking %s again", short(after)), func(t *task) {
			t.step, t.reason, t.waits = stepCheck, "", 0
			t.session = res.out.SessionID
		}, nil) == nil
	}
	if after == before {
		s.stop(ctx, t, failure{kind: problems.Unchanged, summary: "the builder changed nothing",
			detail: "The session ended without changing any file. Reply retry or hint with what to do, or skip.", logTail: res.out.FinalText, step: stepBuild})
		return false
	}
	return s.update(ctx, t, "built", fmt.Sprintf("built: commit %s", short(after)), func(t *task) {
		t.head, t.step, t.reason, t.waits = after, stepCheck, "", 0
		t.session = res.out.SessionID
	}, nil) == nil
}

func titleOr(t Task) string {
	if t.Title != "" {
		return t.Title
	}
	return t.ID
}
