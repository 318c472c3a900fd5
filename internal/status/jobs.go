package status

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/internal/state"
)

// JobStatus is one job as agentkit job status shows it.
type JobStatus struct {
	Repo            string          `json:"repo"`
	Name            string          `json:"name"`
	State           string          `json:"state"`
	Revision        int             `json:"revision"`
	PlannedRevision int             `json:"planned_revision"`
	Tokens          int64           `json:"tokens"`
	Budget          int64           `json:"budget,omitempty"`
	Held            string          `json:"held,omitempty"`
	Paused          bool            `json:"paused,omitempty"`
	OverBudget      bool            `json:"over_budget,omitempty"`
	FinalReview     string          `json:"final_review,omitempty"`
	Branch          string          `json:"branch,omitempty"`
	Head            string          `json:"head,omitempty"`
	Notes           []string        `json:"notes,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       time.Time       `json:"started_at,omitzero"`
	FinishedAt      time.Time       `json:"finished_at,omitzero"`
	Tasks           []TaskStatus    `json:"tasks"`
	Problems        []ProblemStatus `json:"problems"`
}

// TaskStatus is one task of a job.
type TaskStatus struct {
	Name        string    `json:"name"`
	Title       string    `json:"title,omitempty"`
	Kind        string    `json:"kind"`
	DependsOn   []string  `json:"depends_on,omitempty"`
	State       string    `json:"state"`
	Step        string    `json:"step"`
	Attempts    int       `json:"attempts"`
	Runtime     string    `json:"runtime,omitempty"`
	Session     string    `json:"session,omitempty"`
	Tokens      int64     `json:"tokens"`
	WaitUntil   time.Time `json:"wait_until,omitzero"`
	Merged      string    `json:"merged,omitempty"`
	LastEvent   string    `json:"last_event,omitempty"`
	LastEventAt time.Time `json:"last_event_at,omitzero"`
}

// ProblemStatus is an open problem of a job.
type ProblemStatus struct {
	Code    string `json:"code"`
	Task    string `json:"task,omitempty"`
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	State   string `json:"state"`
}

// Jobs returns the jobs of a repository (name "" for all of them), oldest
// first, with their tasks, open problems and what holds them.
func Jobs(ctx context.Context, db *state.DB, repo, repoPath, name string) ([]JobStatus, error) {
	q := `SELECT id, name, state, revision, planned_revision, replan, tokens, hold, final_review, head, created_at, started_at, finished_at
		FROM jobs WHERE repo = ?`
	args := []any{repo}
	if name != "" {
		q += " AND name = ?"
		args = append(args, name)
	}
	rows, err := db.QueryContext(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	type jobRow struct {
		id     int64
		replan bool
		js     JobStatus
	}
	var list []jobRow
	for rows.Next() {
		var r jobRow
		var created, started, finished string
		if err := rows.Scan(&r.id, &r.js.Name, &r.js.State, &r.js.Revision, &r.js.PlannedRevision, &r.replan, &r.js.Tokens,
			&r.js.Held, &r.js.FinalReview, &r.js.Head, &created, &started, &finished); err != nil {
			rows.Close()
			return nil, err
		}
		r.js.Repo = repo
		r.js.CreatedAt, r.js.StartedAt, r.js.FinishedAt = state.ParseTime(created), state.ParseTime(started), state.ParseTime(finished)
		list = append(list, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if name != "" && len(list) == 0 {
		return nil, fmt.Errorf("no job %q in %s; agentkit job status lists the jobs", name, repo)
	}
	cfg, cfgErr := project.Load(project.Path(repoPath))
	paused, pausedBy, err := pauseOf(ctx, db, repo)
	if err != nil {
		return nil, err
	}
	out := make([]JobStatus, 0, len(list))
	for _, r := range list {
		js := r.js
		if js.Tasks, err = jobTasks(ctx, db, repo, r.id, js.Name); err != nil {
			return nil, err
		}
		if js.Problems, err = jobProblems(ctx, db, repo, js.Name); err != nil {
			return nil, err
		}
		if cfgErr == nil {
			js.Budget, js.Branch = cfg.Budget.JobTokens, cfg.IntegrationBranch
		}
		js.OverBudget = js.Budget > 0 && js.Tokens >= js.Budget
		js.Paused = paused && js.State == "started"
		js.Notes = notes(js, r.replan, pausedBy)
		out = append(out, js)
	}
	return out, nil
}

// notes says in words what a person needs to know about the job.
func notes(js JobStatus, replan bool, pausedBy string) []string {
	var n []string
	switch js.State {
	case "done":
		branch := orDefault(js.Branch, "agentkit/integration")
		n = append(n, fmt.Sprintf("%s is at %s; take it into your branch with: git merge %s", branch, js.Head, branch))
		return n
	case "cancelled":
		return append(n, "cancelled; agentkit job clean removes its work trees and branches")
	case "created":
		return append(n, "not started: agentkit job start "+js.Name)
	}
	if js.Paused {
		n = append(n, "paused by "+pausedBy+": no new sessions start (agentkit resume)")
	}
	if js.Held != "" {
		n = append(n, "held: two tasks failed the same way ("+js.Held+"); nothing new launches until one of them is retried")
	}
	if js.OverBudget {
		n = append(n, fmt.Sprintf("over its token budget (%d of %d tokens): nothing new launches; the work so far is kept", js.Tokens, js.Budget))
	}
	switch {
	case js.PlannedRevision == 0:
		n = append(n, "waiting for its plan")
	case replan || js.Revision > js.PlannedRevision:
		n = append(n, fmt.Sprintf("re-planning (revision %d): new launches and merges wait", js.Revision))
	}
	if len(js.Problems) > 0 {
		n = append(n, fmt.Sprintf("%d open problem(s): agentkit problem show CODE", len(js.Problems)))
	}
	return n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pauseOf says whether the repository is paused (by itself or with every
// repository), and by whom.
func pauseOf(ctx context.Context, db *state.DB, repo string) (bool, string, error) {
	rows, err := db.QueryContext(ctx, "SELECT scope, paused, who, channel FROM pauses WHERE scope IN ('', ?) ORDER BY scope", repo)
	if err != nil {
		return false, "", fmt.Errorf("reading pause state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var scope, who, ch string
		var paused bool
		if err := rows.Scan(&scope, &paused, &who, &ch); err != nil {
			return false, "", err
		}
		if paused {
			return true, fmt.Sprintf("%s (%s)", who, ch), nil
		}
	}
	return false, "", rows.Err()
}

func jobTasks(ctx context.Context, db *state.DB, repo string, jobID int64, job string) ([]TaskStatus, error) {
	rows, err := db.QueryContext(ctx, `SELECT t.name, t.spec, t.state, t.step, t.runtime, t.session, t.tokens, t.wait_until, t.merged,
			(SELECT count(*) FROM attempts a WHERE a.task_id = t.id AND a.counted = 1 AND a.ended_at <> '')
		FROM tasks t WHERE t.job_id = ? ORDER BY t.seq, t.id`, jobID)
	if err != nil {
		return nil, fmt.Errorf("reading tasks: %w", err)
	}
	out := []TaskStatus{}
	for rows.Next() {
		var ts TaskStatus
		var spec, wait string
		if err := rows.Scan(&ts.Name, &spec, &ts.State, &ts.Step, &ts.Runtime, &ts.Session, &ts.Tokens, &wait, &ts.Merged, &ts.Attempts); err != nil {
			rows.Close()
			return nil, err
		}
		var sp struct {
			Title     string   `json:"title"`
			Kind      string   `json:"kind"`
			DependsOn []string `json:"depends_on"`
		}
		_ = json.Unmarshal([]byte(spec), &sp)
		ts.Title, ts.Kind, ts.DependsOn = sp.Title, sp.Kind, sp.DependsOn
		ts.WaitUntil = state.ParseTime(wait)
		out = append(out, ts)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	last := map[string]Event{}
	erows, err := db.QueryContext(ctx, `SELECT task, at, message FROM events WHERE id IN
		(SELECT max(id) FROM events WHERE repo = ? AND job = ? AND task <> '' GROUP BY task)`, repo, job)
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer erows.Close()
	for erows.Next() {
		var e Event
		var at string
		if err := erows.Scan(&e.Task, &at, &e.Message); err != nil {
			return nil, err
		}
		e.At = state.ParseTime(at)
		last[e.Task] = e
	}
	for i := range out {
		if e, ok := last[out[i].Name]; ok {
			out[i].LastEvent, out[i].LastEventAt = e.Message, e.At
		}
	}
	return out, erows.Err()
}

func jobProblems(ctx context.Context, db *state.DB, repo, job string) ([]ProblemStatus, error) {
	rows, err := db.QueryContext(ctx, `SELECT code, task, kind, summary, state FROM problems
		WHERE repo = ? AND job = ? AND state IN ('open', 'answered') ORDER BY id`, repo, job)
	if err != nil {
		return nil, fmt.Errorf("reading problems: %w", err)
	}
	defer rows.Close()
	out := []ProblemStatus{}
	for rows.Next() {
		var p ProblemStatus
		if err := rows.Scan(&p.Code, &p.Task, &p.Kind, &p.Summary, &p.State); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// JobSummary is a job in the machine-wide status: its state and how far its tasks got.
type JobSummary struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Tasks  int    `json:"tasks"`
	Merged int    `json:"merged"`
	Held   bool   `json:"held,omitempty"`
}

// jobSummaries returns the unfinished jobs of every repository, by repository.
func jobSummaries(ctx context.Context, db *state.DB) (map[string][]JobSummary, error) {
	rows, err := db.QueryContext(ctx, `SELECT j.repo, j.name, j.state, j.hold <> '',
			(SELECT count(*) FROM tasks t WHERE t.job_id = j.id),
			(SELECT count(*) FROM tasks t WHERE t.job_id = j.id AND t.state = 'merged')
		FROM jobs j WHERE j.state IN ('created', 'started') ORDER BY j.id`)
	if err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	defer rows.Close()
	out := map[string][]JobSummary{}
	for rows.Next() {
		var repo string
		var js JobSummary
		if err := rows.Scan(&repo, &js.Name, &js.State, &js.Held, &js.Tasks, &js.Merged); err != nil {
			return nil, err
		}
		out[repo] = append(out[repo], js)
	}
	return out, rows.Err()
}
