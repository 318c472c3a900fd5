package supervisor

import (
	"context"
	"database/sql"
)

// emit records an event in its own transaction.
func (s *Supervisor) emit(ctx context.Context, jobName, taskName, kind, msg string) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	e := &Event{Repo: s.repo.Name, Job: jobName, Task: taskName, At: s.clock.Now(), Kind: kind, Message: msg}
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error { return insertEvent(ctx, tx, e) })
	if err != nil {
		s.log.Error("recording an event", "err", err)
		return
	}
	s.published(e)
}

func (s *Supervisor) published(e *Event) {
	s.log.Info(e.Message, "job", e.Job, "task", e.Task, "kind", e.Kind)
	if s.onEvent != nil {
		s.onEvent(*e)
	}
}

// txFunc is more work for a state change's transaction; it may amend the event.
type txFunc func(tx *sql.Tx, e *Event) error

// update changes a task (and its job) under the lock and writes both, an
// event and whatever extra does, in one transaction. On failure the
// in-memory task and job are restored.
func (s *Supervisor) update(ctx context.Context, t *task, kind, msg string, mutate func(t *task), extra txFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateLocked(ctx, t, kind, msg, mutate, extra)
}

func (s *Supervisor) updateLocked(ctx context.Context, t *task, kind, msg string, mutate func(t *task), extra txFunc) error {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	oldTask, oldJob := *t, *t.job
	if mutate != nil {
		mutate(t)
	}
	now := s.clock.Now()
	e := &Event{Repo: s.repo.Name, Job: t.job.name, Task: t.name, At: now, Kind: kind, Message: msg}
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if extra != nil {
			if err := extra(tx, e); err != nil {
				return err
			}
		}
		if err := saveTask(ctx, tx, t, now); err != nil {
			return err
		}
		if err := saveJob(ctx, tx, t.job, now); err != nil {
			return err
		}
		if e.Message == "" {
			return nil
		}
		return insertEvent(ctx, tx, e)
	})
	if err != nil {
		*t, *t.job = oldTask, oldJob
		s.log.Error("saving a task", "task", t.name, "err", err)
		return err
	}
	if e.Message != "" {
		s.published(e)
	}
	return nil
}

// updateJob changes a job under the lock and writes it with an event.
func (s *Supervisor) updateJob(ctx context.Context, j *job, kind, msg string, mutate func(j *job), extra txFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateJobLocked(ctx, j, kind, msg, mutate, extra)
}

func (s *Supervisor) updateJobLocked(ctx context.Context, j *job, kind, msg string, mutate func(j *job), extra txFunc) error {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	old := *j
	if mutate != nil {
		mutate(j)
	}
	now := s.clock.Now()
	e := &Event{Repo: s.repo.Name, Job: j.name, At: now, Kind: kind, Message: msg}
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if extra != nil {
			if err := extra(tx, e); err != nil {
				return err
			}
		}
		if err := saveJob(ctx, tx, j, now); err != nil {
			return err
		}
		if e.Message == "" {
			return nil
		}
		return insertEvent(ctx, tx, e)
	})
	if err != nil {
		*j = old
		s.log.Error("saving a job", "job", j.name, "err", err)
		return err
	}
	if e.Message != "" {
		s.published(e)
	}
	return nil
}
