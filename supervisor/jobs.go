package supervisor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/atomicfile"
	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
)

// CreateJob writes .ai/jobs/<name>.json with the request as revision 1 and
// records the job, not yet started.
func CreateJob(ctx context.Context, db *state.DB, repo repos.Repo, name, request string, now time.Time) (*JobFile, error) {
	if err := ValidateJobName(name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(request) == "" {
		return nil, errors.New("the request is empty: write what the job should do into the request file")
	}
	path := JobPath(repo.Path, name)
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("job %q already exists (%s); to correct it, run agentkit job update %s --request-file FILE", name, path, name)
	}
	jf := &JobFile{Name: name, Revisions: []Revision{{Revision: 1, Request: request, At: now.UTC()}}, Acceptance: ParseAcceptance(request)}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE repo = ? AND name = ?", repo.Name, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("job %q is already recorded for %s, though its file is missing; restore %s from Git, or choose another name", name, repo.Name, path)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO jobs (repo, name, state, revision, created_at, updated_at) VALUES (?, ?, 'created', 1, ?, ?)",
			repo.Name, name, state.Now(now), state.Now(now)); err != nil {
			return fmt.Errorf("recording job %s: %w", name, err)
		}
		return writeJobFile(repo.Path, jf)
	})
	if err != nil {
		// The file is written just before the commit; a failed commit takes it back.
		if _, statErr := os.Stat(path); statErr == nil {
			_ = os.Remove(path)
		}
		return nil, err
	}
	return jf, nil
}

// UpdateJob adds a correction to a job as its next revision. New launches
// and merges of the job wait until the supervisor has re-planned it.
func UpdateJob(ctx context.Context, db *state.DB, repo repos.Repo, name, correction string, now time.Time) (*JobFile, error) {
	if strings.TrimSpace(correction) == "" {
		return nil, errors.New("the correction is empty: write what should change into the request file")
	}
	jf, err := LoadJobFile(repo.Path, name)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(JobPath(repo.Path, name))
	if err != nil {
		return nil, err
	}
	written := false
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		st, err := ensureJobRow(ctx, tx, repo, jf, now)
		if err != nil {
			return err
		}
		if st == JobDone || st == JobCancelled {
			return fmt.Errorf("job %q is %s; create a new job for more work (agentkit job create NAME --request-file FILE)", name, st)
		}
		jf.Revisions = append(jf.Revisions, Revision{Revision: jf.Revision() + 1, Request: correction, At: now.UTC()})
		if acc := ParseAcceptance(correction); len(acc) > 0 {
			jf.Acceptance = acc
		}
		if _, err := tx.ExecContext(ctx, "UPDATE jobs SET revision = ?, updated_at = ? WHERE repo = ? AND name = ?",
			jf.Revision(), state.Now(now), repo.Name, name); err != nil {
			return fmt.Errorf("recording the correction: %w", err)
		}
		written = true
		return writeJobFile(repo.Path, jf)
	})
	if err != nil {
		if written {
			// The file is written just before the commit; a failed commit takes it back.
			_ = atomicfile.Write(JobPath(repo.Path, name), old, 0o644)
		}
		return nil, err
	}
	return jf, nil
}

// ensureJobRow records a job whose file exists but that the store does not
// know (a job file from Git), and returns its state.
func ensureJobRow(ctx context.Context, tx *sql.Tx, repo repos.Repo, jf *JobFile, now time.Time) (JobState, error) {
	var st JobState
	err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE repo = ? AND name = ?", repo.Name, jf.Name).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO jobs (repo, name, state, revision, created_at, updated_at) VALUES (?, ?, 'created', ?, ?, ?)",
			repo.Name, jf.Name, jf.Revision(), state.Now(now), state.Now(now))
		return JobCreated, err
	}
	return st, err
}

// StartJobs marks a job (or, with name "", every created job of the
// repository) started, with an optional worker limit, and returns the names.
func StartJobs(ctx context.Context, db *state.DB, repo repos.Repo, name string, maxWorkers int, now time.Time) ([]string, error) {
	if maxWorkers < 0 {
		return nil, fmt.Errorf("--max-workers is %d; use a positive number", maxWorkers)
	}
	var started []string
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var names []string
		if name != "" {
			jf, err := LoadJobFile(repo.Path, name)
			if err != nil {
				return err
			}
			st, err := ensureJobRow(ctx, tx, repo, jf, now)
			if err != nil {
				return err
			}
			switch st {
			case JobDone:
				return fmt.Errorf("job %q is done; agentkit job status %s shows its result", name, name)
			case JobCancelled:
				return fmt.Errorf("job %q was cancelled; create a new job to do the work", name)
			}
			names = []string{name}
		} else {
			rows, err := tx.QueryContext(ctx, "SELECT name FROM jobs WHERE repo = ? AND state IN ('created', 'started') ORDER BY id", repo.Name)
			if err != nil {
				return err
			}
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					rows.Close()
					return err
				}
				names = append(names, n)
			}
			rows.Close()
			if len(names) == 0 {
				return fmt.Errorf("no job to start in %s: create one with agentkit job create NAME --request-file FILE", repo.Name)
			}
		}
		for _, n := range names {
			q := "UPDATE jobs SET state = 'started', started_at = CASE WHEN started_at = '' THEN ? ELSE started_at END, updated_at = ?"
			args := []any{state.Now(now), state.Now(now)}
			if maxWorkers > 0 {
				q += ", max_workers = ?"
				args = append(args, maxWorkers)
			}
			args = append(args, repo.Name, n)
			if _, err := tx.ExecContext(ctx, q+" WHERE repo = ? AND name = ?", args...); err != nil {
				return fmt.Errorf("starting job %s: %w", n, err)
			}
		}
		started = names
		return nil
	})
	return started, err
}

// CancelJob cancels a job: a running supervisor stops its sessions and
// cancels its unfinished tasks; merged work stays on the integration branch.
func CancelJob(ctx context.Context, db *state.DB, repo repos.Repo, name string, now time.Time) error {
	return db.Tx(ctx, func(tx *sql.Tx) error {
		var st JobState
		err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE repo = ? AND name = ?", repo.Name, name).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no job %q in %s; agentkit job status lists the jobs", name, repo.Name)
		}
		if err != nil {
			return err
		}
		switch st {
		case JobDone:
			return fmt.Errorf("job %q is already done; nothing to cancel", name)
		case JobCancelled:
			return fmt.Errorf("job %q is already cancelled", name)
		}
		_, err = tx.ExecContext(ctx, "UPDATE jobs SET state = 'cancelled', finished_at = ?, updated_at = ? WHERE repo = ? AND name = ?",
			state.Now(now), state.Now(now), repo.Name, name)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO events (repo, job, task, at, kind, message) VALUES (?, ?, '', ?, 'job', 'cancelled')",
			repo.Name, name, state.Now(now))
		return err
	})
}

// CleanResult says what CleanJob removed.
type CleanResult struct {
	Worktrees []string `json:"worktrees"`
	Branches  []string `json:"branches"`
}

// CleanJob removes a finished or cancelled job's work trees and branches.
// The integration branch and the owner's checkout are not touched.
func CleanJob(ctx context.Context, db *state.DB, repo repos.Repo, name string) (CleanResult, error) {
	var res CleanResult
	var id int64
	var st JobState
	err := db.QueryRowContext(ctx, "SELECT id, state FROM jobs WHERE repo = ? AND name = ?", repo.Name, name).Scan(&id, &st)
	if errors.Is(err, sql.ErrNoRows) {
		return res, fmt.Errorf("no job %q in %s; agentkit job status lists the jobs", name, repo.Name)
	}
	if err != nil {
		return res, err
	}
	if st != JobDone && st != JobCancelled {
		return res, fmt.Errorf("job %q is %s: clean removes its work only once it is done or cancelled (agentkit job cancel %s)", name, st, name)
	}
	rows, err := db.QueryContext(ctx, "SELECT name FROM tasks WHERE job_id = ? ORDER BY seq", id)
	if err != nil {
		return res, err
	}
	var tasks []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return res, err
		}
		tasks = append(tasks, n)
	}
	rows.Close()
	for _, t := range tasks {
		dir := TaskDir(repo.Path, t)
		branch := TaskBranch(name, t)
		if git.IsWorktree(ctx, repo.Path, dir) && git.CurrentBranch(ctx, dir) == branch {
			if err := git.RemoveWorktree(ctx, repo.Path, dir); err != nil {
				return res, fmt.Errorf("removing %s: %w", dir, err)
			}
			res.Worktrees = append(res.Worktrees, relPath(repo.Path, dir))
		}
		if git.BranchExists(ctx, repo.Path, branch) {
			if err := git.DeleteBranch(ctx, repo.Path, branch); err != nil {
				return res, fmt.Errorf("deleting branch %s: %w", branch, err)
			}
			res.Branches = append(res.Branches, branch)
		}
	}
	return res, nil
}
