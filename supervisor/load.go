package supervisor

import (
	"context"
	"fmt"
)

// loadJobs reads the repository's started and cancelled jobs with their tasks.
func (s *Supervisor) loadJobs(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE repo = ? AND state IN ('started', 'cancelled') ORDER BY id", s.repo.Name)
	if err != nil {
		return fmt.Errorf("reading jobs: %w", err)
	}
	var loaded []*job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("reading jobs: %w", err)
		}
		loaded = append(loaded, j)
	}
	rows.Close()
	for _, j := range loaded {
		if err := s.loadTasks(ctx, j); err != nil {
			return err
		}
		s.mu.Lock()
		s.jobs[j.id] = j
		s.mu.Unlock()
	}
	return nil
}

// loadTasks reads a job's tasks in plan order.
func (s *Supervisor) loadTasks(ctx context.Context, j *job) error {
	rows, err := s.db.QueryContext(ctx, "SELECT "+taskColumns+" FROM tasks WHERE job_id = ? ORDER BY seq, id", j.id)
	if err != nil {
		return fmt.Errorf("reading the tasks of job %s: %w", j.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return err
		}
		t.job = j
		j.tasks = append(j.tasks, t)
		j.byName[t.name] = t
	}
	return rows.Err()
}

// refresh reads what other processes changed: jobs started, corrected or
// cancelled, the pause state, and decisions to apply.
func (s *Supervisor) refresh(ctx context.Context) error {
	if err := s.loadProject(); err != nil {
		s.log.Error("reading project settings; keeping the previous ones", "err", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id, state, revision, max_workers FROM jobs WHERE repo = ?", s.repo.Name)
	if err != nil {
		return fmt.Errorf("reading jobs: %w", err)
	}
	type row struct {
		id         int64
		state      JobState
		revision   int
		maxWorkers int
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.state, &r.revision, &r.maxWorkers); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	for _, r := range all {
		s.mu.Lock()
		j := s.jobs[r.id]
		if j != nil {
			j.state, j.revision, j.maxWorkers = r.state, r.revision, r.maxWorkers
		}
		s.mu.Unlock()
		if j != nil || r.state != JobStarted {
			continue
		}
		nj, err := scanJob(s.db.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", r.id))
		if err != nil {
			return fmt.Errorf("reading job %d: %w", r.id, err)
		}
		if err := s.loadTasks(ctx, nj); err != nil {
			return err
		}
		s.mu.Lock()
		s.jobs[nj.id] = nj
		s.mu.Unlock()
	}
	p, err := s.store.Paused(ctx, s.repo.Name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	changed := p.Paused != s.paused.Paused
	s.paused = p
	s.mu.Unlock()
	if changed {
		msg := "resumed: launches continue"
		if p.Paused {
			msg = fmt.Sprintf("paused by %s (%s): no new launches; running sessions finish", p.Who, p.Channel)
		}
		s.emit(ctx, "", "", "pause", msg)
	}
	return s.applyDecisions(ctx)
}
