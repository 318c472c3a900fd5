package supervisor

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/runtimes"
)

// AttemptEnv names the variable that marks an agent's processes with their
// attempt, so a restarted supervisor can find the ones a dead one left.
const AttemptEnv = "AGENTKIT_ATTEMPT"

// sessionSpec is one agent session to run.
type sessionSpec struct {
	job     *job
	task    *task // nil for the coordinator and the final review
	step    string
	runtime string
	role    runtimes.Role
	dir     string
	prompt  string
	// session is the session to resume (resume true) or, for the command
	// runtime, the id a new session gets.
	session string
	resume  bool
	// state is the task state while the session runs.
	state TaskState
	// what the start event says.
	startMsg string
}

// sessionResult is how a session ended.
type sessionResult struct {
	out runtimes.Outcome
	// err is set when the session could not be started.
	err error
	// interrupted is set when the supervisor stopped it (shutdown, cancel).
	interrupted bool
	attempt     int64
}

// waitClass reports whether a failure class waits without using an attempt.
func waitClass(c runtimes.Class) bool {
	return c == runtimes.ClassUsageLimit || c == runtimes.ClassRateLimit || c == runtimes.ClassProviderOutage
}

// runSession records an attempt, runs the session and records how it ended,
// adding its tokens to the task and the job.
func (s *Supervisor) runSession(ctx context.Context, sp sessionSpec) sessionResult {
	rt, err := s.runtime(sp.runtime)
	if err != nil {
		return sessionResult{err: err}
	}
	if sp.runtime == "command" && sp.session == "" {
		sp.session = newID("ses-")
	}
	token := newID("att-")
	now := s.clock.Now()
	wctx := context.WithoutCancel(ctx) // the attempt is recorded even when the session is stopped
	var attemptID int64
	insert := func(tx *sql.Tx, _ *Event) error {
		var taskID any
		if sp.task != nil {
			taskID = sp.task.id
		}
		res, err := tx.ExecContext(wctx, `INSERT INTO attempts (job_id, task_id, step, runtime, session, token, owner, started_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sp.job.id, taskID, sp.step, sp.runtime, sp.session, token, s.pid, state.Now(now))
		if err != nil {
			return fmt.Errorf("recording an attempt: %w", err)
		}
		attemptID, _ = res.LastInsertId()
		return nil
	}
	if sp.task != nil {
		err = s.update(ctx, sp.task, "session", sp.startMsg, func(t *task) {
			t.state = sp.state
			if sp.step == stepBuild {
				// The builder's session is the task's; a reviewer's is its own.
				t.runtime = sp.runtime
				if sp.session != "" {
					t.session = sp.session
				}
			}
		}, insert)
	} else {
		err = s.updateJob(ctx, sp.job, "session", sp.startMsg, nil, insert)
	}
	if err != nil {
		return sessionResult{err: err}
	}
	proj := s.project()
	env := []string{
		runtimes.EnvJob + "=" + sp.job.name,
		runtimes.EnvRoot + "=" + s.root,
		AttemptEnv + "=" + token,
	}
	if sp.task != nil {
		env = append(env, runtimes.EnvTask+"="+sp.task.name)
	}
	req := runtimes.Request{
		Dir:        sp.dir,
		Prompt:     sp.prompt,
		Role:       sp.role,
		Env:        env,
		Timeout:    proj.Runtimes.Timeout.Or(s.timeout),
		EventsPath: filepath.Join(s.root, ".ai", "runtime", fmt.Sprintf("process-%d", attemptID), "events.jsonl"),
	}
	if sp.runtime == "command" {
		req.Session = sp.session
	}
	if sp.resume {
		req.Resume = sp.session
	}
	start := time.Now()
	out, runErr := rt.Run(ctx, req)
	s.addStat(func(st *Stats) { st.Session += time.Since(start) })
	res := sessionResult{out: out, err: runErr, interrupted: ctx.Err() != nil, attempt: attemptID}
	if out.SessionID == "" {
		out.SessionID = sp.session
		res.out.SessionID = sp.session
	}
	tokens := out.Usage.Input + out.Usage.Output
	counted := runErr == nil && !res.interrupted && !waitClass(out.Class)
	outcome := string(out.Class)
	switch {
	case runErr != nil:
		outcome = "could not start: " + runErr.Error()
	case res.interrupted:
		outcome = "interrupted: the supervisor stopped the session"
	case outcome == "":
		outcome = "ok"
	}
	end := func(tx *sql.Tx, _ *Event) error {
		_, err := tx.ExecContext(wctx, `UPDATE attempts SET ended_at = ?, exit_code = ?, class = ?, message = ?, outcome = ?,
			tokens = ?, counted = ?, session = ? WHERE id = ?`, state.Now(s.clock.Now()), out.ExitCode, string(out.Class),
			out.Message, outcome, tokens, counted, out.SessionID, attemptID)
		return err
	}
	if sp.task != nil {
		_ = s.update(wctx, sp.task, "", "", func(t *task) {
			t.tokens += tokens
			t.job.tokens += tokens
		}, end)
	} else {
		_ = s.updateJob(wctx, sp.job, "", "", func(j *job) { j.tokens += tokens }, end)
	}
	return res
}

// backoff is how long to wait before checking a provider again when it
// named no reset time (RUNTIMES.md): a usage limit waits 30 min, then 15,
// 30, 60 (capped); throttling and outages 1 min doubling to 30.
func backoff(c runtimes.Class, waits int) time.Duration {
	if c == runtimes.ClassUsageLimit {
		steps := []time.Duration{30 * time.Minute, 15 * time.Minute, 30 * time.Minute}
		if waits < len(steps) {
			return steps[waits]
		}
		return time.Hour
	}
	d := time.Minute << min(waits, 5)
	return min(d, 30*time.Minute)
}

// waitUntil says when to check a provider again after a session hit a limit.
func (s *Supervisor) waitUntil(out runtimes.Outcome, waits int) time.Time {
	now := s.clock.Now()
	if out.ResetAt.After(now) {
		return out.ResetAt
	}
	return now.Add(backoff(out.Class, waits))
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
