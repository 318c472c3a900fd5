package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// reconcile makes the store and the work trees agree after a supervisor
// ended, however it ended: sessions it left are killed and count as a crash
// of their step, half-done merges are rolled back, and nothing that finished
// runs again.
func (s *Supervisor) reconcile(ctx context.Context) error {
	integ, err := s.ensureIntegration(ctx)
	if err != nil {
		return err
	}
	type open struct {
		id    int64
		token string
		owner int
	}
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.token, a.owner FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.ended_at = '' AND j.repo = ?`, s.repo.Name)
	if err != nil {
		return fmt.Errorf("reading open attempts: %w", err)
	}
	var left []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.id, &o.token, &o.owner); err != nil {
			rows.Close()
			return err
		}
		left = append(left, o)
	}
	rows.Close()
	for _, o := range left {
		killed := killOrphans(o.token)
		outcome := fmt.Sprintf("interrupted: the supervisor (pid %d) ended while the session ran", o.owner)
		if killed > 0 {
			outcome += fmt.Sprintf("; %d leftover process(es) killed", killed)
		}
		if _, err := s.db.ExecContext(ctx, "UPDATE attempts SET ended_at = ?, class = 'crash', outcome = ? WHERE id = ?",
			state.Now(s.clock.Now()), outcome, o.id); err != nil {
			return fmt.Errorf("closing attempt %d: %w", o.id, err)
		}
	}
	s.mu.Lock()
	jobs := s.sortedJobs()
	s.mu.Unlock()
	for _, j := range jobs {
		for _, t := range j.tasks {
			s.reconcileTask(ctx, integ, t)
		}
	}
	return nil
}

func (s *Supervisor) reconcileTask(ctx context.Context, integ string, t *task) {
	switch t.state {
	case Building:
		f := failure{kind: problems.Crashed, step: stepBuild,
			summary: "the builder's session was cut off: agentkit stopped while it ran",
			detail:  "The supervisor ended while the builder ran, after one automatic retry of this step had been used."}
		if t.hasRetried(string(problems.Crashed)) {
			s.stop(ctx, t, f)
			return
		}
		_ = s.update(ctx, t, "recover", "recovered after a restart: the builder's session was cut off; it continues (its one automatic retry)", func(t *task) {
			t.state = Ready
			t.markRetried(string(problems.Crashed))
			if t.session != "" && t.reason == "" {
				t.reason = "Your previous session was cut off when agentkit stopped. Continue the task where you left off."
			}
		}, nil)
	case Checking, Reviewing:
		_ = s.update(ctx, t, "recover", fmt.Sprintf("recovered after a restart: %s runs again", t.step), func(t *task) { t.state = Ready }, nil)
	case Merging:
		msg := "recovered after a restart: the merge runs again"
		if t.mergeFrom != "" {
			if head, err := git.Head(ctx, integ); err == nil && head != t.mergeFrom {
				if err := git.ResetHard(ctx, integ, t.mergeFrom); err != nil {
					s.log.Error("rolling back a half-done merge", "task", t.name, "err", err)
					return
				}
				msg = fmt.Sprintf("recovered after a restart: rolled back a half-done merge (%s back to %s); the merge runs again", short(head), short(t.mergeFrom))
			}
		}
		_ = s.update(ctx, t, "recover", msg, func(t *task) { t.state, t.step, t.mergeFrom = Ready, stepMerge, "" }, nil)
	case Merged:
		if !t.spec.Kind.ReadOnly() && git.IsWorktree(ctx, s.root, TaskDir(s.root, t.name)) {
			s.removeTaskWorktree(ctx, t)
		}
	}
}

// orphanWait bounds how long a restart waits for killed leftovers to go.
const orphanWait = 5 * time.Second
