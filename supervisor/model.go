package supervisor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

// TaskState is where a task is (DESIGN.md, Supervisor).
type TaskState string

// The task states.
const (
	Pending   TaskState = "pending"
	Ready     TaskState = "ready"
	Building  TaskState = "building"
	Checking  TaskState = "checking"
	Reviewing TaskState = "reviewing"
	Merging   TaskState = "merging"
	Merged    TaskState = "merged"
	Waiting   TaskState = "waiting"
	Stopped   TaskState = "stopped"
	Skipped   TaskState = "skipped"
	Cancelled TaskState = "cancelled"
)

// Terminal reports whether the task is finished for good.
func (s TaskState) Terminal() bool { return s == Merged || s == Skipped || s == Cancelled }

// Active reports whether a pipeline is working on the task.
func (s TaskState) Active() bool {
	return s == Building || s == Checking || s == Reviewing || s == Merging
}

// The steps a task's pipeline runs; a task's step is what runs when it is
// launched next.
const (
	stepBuild  = "build"
	stepCheck  = "check"
	stepReview = "review"
	stepMerge  = "merge"
)

// JobState is where a job is.
type JobState string

// The job states.
const (
	JobCreated   JobState = "created"
	JobStarted   JobState = "started"
	JobDone      JobState = "done"
	JobCancelled JobState = "cancelled"
)

// job is a started job as the supervisor holds it.
type job struct {
	id              int64
	name            string
	state           JobState
	revision        int
	plannedRevision int
	replan          bool
	planWords       string
	planSession     string
	maxWorkers      int
	tokens          int64
	hold            string
	base            string
	finalReview     string
	reviewRounds    int
	problemID       int64
	head            string

	tasks  []*task
	byName map[string]*task

	// In memory only.
	planning      bool      // a coordinator session runs
	reviewing     bool      // the final review runs
	planRetried   bool      // the coordinator's one automatic retry is used
	planHint      bool      // the coordinator's own session continues with planWords
	planError     string    // why the last plan was refused, for the next brief
	planWaitUntil time.Time // the coordinator waits for its provider
	reviewWait    time.Time // the final reviewer waits for its provider
	blocked       string    // why launches wait, as last reported
}

// task is one task of a started job.
type task struct {
	id           int64
	job          *job
	name         string
	seq          int
	spec         Task
	state        TaskState
	step         string
	reason       string
	session      string
	runtime      string
	retried      string
	reviewRounds int
	waits        int
	waitUntil    time.Time
	base         string
	head         string
	mergeFrom    string
	merged       string
	problemID    int64
	setupSig     string
	result       string
	tokens       int64

	// In memory only.
	fresh    bool   // the next gate ignores cached results (retry, accept)
	dropped  bool   // a re-plan removed the task while it ran
	nextSpec *Task  // a re-plan's entry for the task, taken when its pipeline ends
	blocked  string // why it is not launched, as last reported
}

// hasRetried reports whether the one automatic retry for kind is used.
func (t *task) hasRetried(kind string) bool {
	for _, k := range strings.Split(t.retried, ",") {
		if k == kind {
			return true
		}
	}
	return false
}

func (t *task) markRetried(kind string) {
	if !t.hasRetried(kind) {
		if t.retried == "" {
			t.retried = kind
		} else {
			t.retried += "," + kind
		}
	}
}

const taskColumns = `id, job_id, name, seq, spec, state, step, reason, session, runtime, retried, review_rounds,
	waits, wait_until, base, head, merge_from, merged, coalesce(problem_id, 0), setup_sig, result, tokens`

func scanTask(row interface{ Scan(...any) error }) (*task, error) {
	var t task
	var jobID int64
	var spec, waitUntil string
	if err := row.Scan(&t.id, &jobID, &t.name, &t.seq, &spec, &t.state, &t.step, &t.reason, &t.session, &t.runtime,
		&t.retried, &t.reviewRounds, &t.waits, &waitUntil, &t.base, &t.head, &t.mergeFrom, &t.merged, &t.problemID,
		&t.setupSig, &t.result, &t.tokens); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &t.spec); err != nil {
		return nil, fmt.Errorf("task %s: reading its stored plan entry: %w", t.name, err)
	}
	t.waitUntil = state.ParseTime(waitUntil)
	return &t, nil
}

// saveTask writes the task's row.
func saveTask(ctx context.Context, tx *sql.Tx, t *task, now time.Time) error {
	spec, err := json.Marshal(t.spec)
	if err != nil {
		return err
	}
	wait := ""
	if !t.waitUntil.IsZero() {
		wait = state.Now(t.waitUntil)
	}
	_, err = tx.ExecContext(ctx, `UPDATE tasks SET spec = ?, state = ?, step = ?, reason = ?, session = ?, runtime = ?,
		retried = ?, review_rounds = ?, waits = ?, wait_until = ?, base = ?, head = ?, merge_from = ?, merged = ?,
		problem_id = ?, setup_sig = ?, result = ?, tokens = ?, seq = ?, updated_at = ? WHERE id = ?`,
		string(spec), t.state, t.step, t.reason, t.session, t.runtime, t.retried, t.reviewRounds, t.waits, wait,
		t.base, t.head, t.mergeFrom, t.merged, nullID(t.problemID), t.setupSig, t.result, t.tokens, t.seq, state.Now(now), t.id)
	if err != nil {
		return fmt.Errorf("saving task %s: %w", t.name, err)
	}
	return nil
}

// insertTask adds a task row and sets its id.
func insertTask(ctx context.Context, tx *sql.Tx, j *job, t *task, now time.Time) error {
	spec, err := json.Marshal(t.spec)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO tasks (job_id, name, seq, spec, state, step, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, j.id, t.name, t.seq, string(spec), t.state, t.step, state.Now(now), state.Now(now))
	if err != nil {
		return fmt.Errorf("adding task %s: %w", t.name, err)
	}
	t.id, _ = res.LastInsertId()
	return saveTask(ctx, tx, t, now)
}

const jobColumns = `id, name, state, revision, planned_revision, replan, plan_words, plan_session, max_workers, tokens,
	hold, base, final_review, review_rounds, coalesce(problem_id, 0), head`

func scanJob(row interface{ Scan(...any) error }) (*job, error) {
	var j job
	if err := row.Scan(&j.id, &j.name, &j.state, &j.revision, &j.plannedRevision, &j.replan, &j.planWords, &j.planSession,
		&j.maxWorkers, &j.tokens, &j.hold, &j.base, &j.finalReview, &j.reviewRounds, &j.problemID, &j.head); err != nil {
		return nil, err
	}
	j.byName = map[string]*task{}
	return &j, nil
}

// saveJob writes the columns the supervisor owns; state, revision and
// max_workers belong to the job commands.
func saveJob(ctx context.Context, tx *sql.Tx, j *job, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET planned_revision = ?, replan = ?, plan_words = ?, plan_session = ?,
		tokens = ?, hold = ?, base = ?, final_review = ?, review_rounds = ?, problem_id = ?, head = ?, updated_at = ?
		WHERE id = ?`, j.plannedRevision, j.replan, j.planWords, j.planSession, j.tokens, j.hold, j.base, j.finalReview,
		j.reviewRounds, nullID(j.problemID), j.head, state.Now(now), j.id)
	if err != nil {
		return fmt.Errorf("saving job %s: %w", j.name, err)
	}
	return nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// Event is one thing that happened to a job or task, as agentkit events shows it.
type Event struct {
	ID      int64     `json:"id"`
	Repo    string    `json:"repo"`
	Job     string    `json:"job,omitempty"`
	Task    string    `json:"task,omitempty"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

func insertEvent(ctx context.Context, tx *sql.Tx, e *Event) error {
	res, err := tx.ExecContext(ctx, "INSERT INTO events (repo, job, task, at, kind, message) VALUES (?, ?, ?, ?, ?, ?)",
		e.Repo, e.Job, e.Task, state.Now(e.At), e.Kind, e.Message)
	if err != nil {
		return fmt.Errorf("recording an event: %w", err)
	}
	e.ID, _ = res.LastInsertId()
	return nil
}
