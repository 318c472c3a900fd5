package supervisor

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

// failure is a step's failure that became a problem.
type failure struct {
	kind    problems.Kind
	summary string
	detail  string
	logTail string
	// step is what retry runs again.
	step string
	// cause is the line whose first line, with the kind, makes a setup
	// problem's signature (DESIGN.md: same kind and same first line).
	cause string
}

// setupSignature names a setup-type problem for the job hold.
func setupSignature(kind problems.Kind, cause string) string {
	if !kind.IsSetup() {
		return ""
	}
	return string(kind) + ": " + strings.Join(strings.Fields(firstLine(cause)), " ")
}

// stop opens a problem for the task and stops it. A setup-type problem
// that another task of the job already has holds the job.
func (s *Supervisor) stop(ctx context.Context, t *task, f failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(ctx, t, f)
}

func (s *Supervisor) stopLocked(ctx context.Context, t *task, f failure) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	sig := setupSignature(f.kind, f.cause)
	_ = s.updateLocked(ctx, t, "problem", "", func(t *task) {
		t.state, t.step, t.setupSig = Stopped, f.step, sig
	}, func(tx *sql.Tx, e *Event) error {
		code, id, err := s.createProblem(ctx, tx, t.job.name, t.name, f, nil)
		if err != nil {
			return err
		}
		t.problemID = id
		e.Message = fmt.Sprintf("stopped: problem %s (%s): %s", code, f.kind, f.summary)
		if sig == "" || t.job.hold != "" {
			return nil
		}
		var others int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM tasks WHERE job_id = ? AND id <> ? AND state = 'stopped' AND setup_sig = ?",
			t.job.id, t.id, sig).Scan(&others); err != nil {
			return err
		}
		if others > 0 {
			t.job.hold = sig
			e.Message += fmt.Sprintf("; the job is held (another task failed the same way): no new launches until one of them is retried")
		}
		return nil
	})
}

// createProblem records a problem in tx and returns its code and row id.
func (s *Supervisor) createProblem(ctx context.Context, tx *sql.Tx, jobName, taskName string, f failure, replies []problems.Verb) (problems.Code, int64, error) {
	summary := f.summary
	if len(summary) > 300 {
		summary = summary[:297] + "..."
	}
	code, err := s.store.CreateTx(ctx, tx, problems.New{Repo: s.repo.Name, Job: jobName, Task: taskName, Kind: f.kind,
		Summary: summary, Detail: f.detail, LogTail: lastChars(f.logTail, GateTailChars), Replies: replies})
	if err != nil {
		return "", 0, fmt.Errorf("recording the problem: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM problems WHERE code = ?", code).Scan(&id); err != nil {
		return "", 0, err
	}
	return code, id, nil
}

// retryOnce gives a failed session its one automatic retry of kind: the
// builder's session continues with reason. Once the retry is used, the
// failure becomes a problem. It reports whether the pipeline goes on.
func (s *Supervisor) retryOnce(ctx context.Context, t *task, f failure, reason string) bool {
	if t.hasRetried(string(f.kind)) {
		s.stop(ctx, t, f)
		return false
	}
	err := s.update(ctx, t, "retry", fmt.Sprintf("%s; retrying once automatically", f.summary), func(t *task) {
		t.markRetried(string(f.kind))
		t.step, t.reason = stepBuild, reason
	}, nil)
	return err == nil
}

// wait puts a task aside until its provider's limit resets; no attempt is used.
func (s *Supervisor) wait(ctx context.Context, t *task, runtime string, out runtimes.Outcome) {
	until := s.waitUntil(out, t.waits)
	_ = s.update(ctx, t, "wait", fmt.Sprintf("waiting until %s (%s: %s); no attempt used", until.Local().Format("2006-01-02 15:04"), out.Class, out.Message),
		func(t *task) {
			t.state, t.waitUntil = Waiting, until
			t.waits++
			if out.SessionID != "" && t.session == "" {
				t.session = out.SessionID
			}
		}, nil)
	if out.Class == runtimes.ClassUsageLimit {
		s.mu.Lock()
		if until.After(s.rtWait[runtime]) {
			s.rtWait[runtime] = until
		}
		s.mu.Unlock()
	}
}

// park returns a task to ready with its step kept, because the job may not
// go on now (pause, hold, budget, a pending re-plan).
func (s *Supervisor) park(ctx context.Context, t *task, why string) {
	_ = s.update(ctx, t, "held", fmt.Sprintf("%s waits: %s", t.step, why), func(t *task) {
		t.state = Ready
		t.blocked = why
	}, nil)
}

// interrupted returns a task whose pipeline the supervisor stopped to ready,
// so the next launch continues the step; a builder session continues its
// session.
func (s *Supervisor) interrupted(ctx context.Context, t *task) {
	_ = s.update(ctx, t, "state", fmt.Sprintf("interrupted during %s; it continues on the next launch", t.step), func(t *task) {
		t.state = Ready
		if t.step == stepBuild && t.session != "" && t.reason == "" {
			t.reason = "Your previous session was interrupted because agentkit stopped. Continue the task where you left off."
		}
	}, nil)
}

// sessionFailure turns a failed session's class into the failure of the
// table in DESIGN.md.
func sessionFailure(who string, res sessionResult, step string) failure {
	out := res.out
	msg := strings.TrimSpace(out.Message)
	if res.err != nil {
		return failure{kind: problems.Crashed, summary: fmt.Sprintf("the %s could not start: %v", who, res.err), step: step, detail: res.err.Error()}
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", out.ExitCode)
	}
	f := failure{step: step, logTail: out.FinalText, cause: msg}
	switch out.Class {
	case runtimes.ClassAuth:
		f.kind, f.summary = problems.AuthRequired, fmt.Sprintf("the %s's runtime is not logged in: %s", who, msg)
		f.detail = "Log the coding-agent CLI in (or fix its key), then reply retry."
	case runtimes.ClassModelUnavailable:
		f.kind, f.summary = problems.ModelUnavailable, fmt.Sprintf("the %s's model is not available: %s", who, msg)
		f.detail = "Fix the model in .ai/project.yaml (runtimes), then reply retry; or reply plan to choose differently."
	case runtimes.ClassTimeout:
		f.kind, f.summary = problems.TimedOut, fmt.Sprintf("the %s timed out: %s", who, msg)
	default:
		f.kind, f.summary = problems.Crashed, fmt.Sprintf("the %s crashed: %s", who, msg)
	}
	return f
}

func lastChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return s
}
