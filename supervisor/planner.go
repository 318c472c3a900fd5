package supervisor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentkit/agentkit/internal/atomicfile"
	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

// readPlan reads and validates .ai/tasks.yaml; a missing file is an empty plan.
func (s *Supervisor) readPlan() (Plan, error) {
	path := TasksPath(s.root)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Plan{}, nil
	}
	if err != nil {
		return Plan{}, fmt.Errorf("reading %s: %w", path, err)
	}
	p, err := ParsePlan(".ai/tasks.yaml", data)
	if err != nil {
		return Plan{}, err
	}
	if err := p.Validate(".ai/tasks.yaml", s.proj); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// schedulePlan plans a job whose plan is missing or stale: from tasks.yaml
// when it holds the job's tasks, else with the coordinator. The caller holds s.mu.
func (s *Supervisor) schedulePlan(ctx context.Context, j *job, now time.Time) {
	if j.planning || (j.problemID != 0 && j.finalReview != "stopped") || j.planWaitUntil.After(now) {
		return
	}
	if !j.replan && j.plannedRevision == 0 {
		p, err := s.readPlan()
		if err != nil {
			s.planProblemLocked(ctx, j, failure{kind: problems.InvalidPlan, summary: "the plan is invalid: " + planSummary(err),
				detail: err.Error() + "\n\nFix .ai/tasks.yaml and reply retry, or reply plan to have the coordinator plan the job."}, nil)
			return
		}
		if tasks := p.ForJob(j.name); len(tasks) > 0 {
			s.applyPlanLocked(ctx, j, tasks, j.revision, false, "tasks.yaml")
			return
		}
	}
	if block := s.launchBlock(j); block != "" {
		if j.blocked != block {
			j.blocked = block
			s.emitLocked(ctx, j.name, "", "held", "planning not launched: "+block)
		}
		return
	}
	s.launchPlanLocked(ctx, j)
}

// planSummary is the first thing wrong with a plan, for a problem's one line.
func planSummary(err error) string {
	var pe *PlanError
	if errors.As(err, &pe) {
		return pe.First().Error()
	}
	return firstLine(err.Error())
}

// planProblemLocked stops the job's planning with a problem.
func (s *Supervisor) planProblemLocked(ctx context.Context, j *job, f failure, replies []problems.Verb) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	_ = s.updateJobLocked(ctx, j, "problem", "", nil, func(tx *sql.Tx, e *Event) error {
		code, id, err := s.createProblem(ctx, tx, j.name, "", f, replies)
		if err != nil {
			return err
		}
		j.problemID = id
		e.Message = fmt.Sprintf("stopped: problem %s (%s): %s", code, f.kind, f.summary)
		return nil
	})
}

// planSnapshot is what a coordinator session needs, taken under the lock.
type planSnapshot struct {
	revision  int
	words     string
	hint      bool
	session   string
	lastError string
	existing  []Task
	states    map[string]TaskState
}

// launchPlanLocked starts the coordinator. The caller holds s.mu.
func (s *Supervisor) launchPlanLocked(ctx context.Context, j *job) {
	snap := planSnapshot{revision: j.revision, words: j.planWords, hint: j.planHint, session: j.planSession,
		lastError: j.planError, states: map[string]TaskState{}}
	for _, t := range j.tasks {
		snap.existing = append(snap.existing, t.spec)
		snap.states[t.name] = t.state
	}
	j.planning, j.blocked = true, ""
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.guard("the planning of job " + j.name)
		s.runPlanner(ctx, j, snap)
		s.mu.Lock()
		j.planning = false
		s.mu.Unlock()
		s.kick()
	}()
}

// runPlanner runs the coordinator (read-only) and applies the plan in its
// final text, or turns what went wrong into a problem.
func (s *Supervisor) runPlanner(ctx context.Context, j *job, snap planSnapshot) {
	jf, err := LoadJobFile(s.root, j.name)
	if err != nil {
		s.mu.Lock()
		s.planProblemLocked(ctx, j, failure{kind: problems.InvalidPlan, summary: "could not read the job file", detail: err.Error()}, nil)
		s.mu.Unlock()
		return
	}
	files, _ := git.Files(ctx, s.root)
	s.mu.Lock()
	proj := s.proj
	s.mu.Unlock()
	rt := proj.Runtimes.Coordinator
	if rt == "" {
		rt = proj.Runtimes.Default
	}
	sp := sessionSpec{job: j, step: "plan", runtime: rt, role: runtimes.RoleReadOnly, dir: s.root,
		startMsg: fmt.Sprintf("planning: %s plans the job (revision %d)", rt, snap.revision)}
	if snap.hint && snap.session != "" {
		sp.resume, sp.session = true, snap.session
		sp.prompt = fmt.Sprintf("The owner's hint: %s\n\n%s\nAnswer again with the whole plan as one fenced yaml block of tasks, as before.\n", snap.words, snap.lastError)
	} else {
		sp.prompt = planBrief(jf, proj, files, snap.existing, snap.states, snap.words, snap.lastError)
	}
	res := s.runSession(ctx, sp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.interrupted {
		return
	}
	out := res.out
	switch {
	case res.err == nil && waitClass(out.Class):
		j.planWaitUntil = s.waitUntil(out, 0)
		s.emitLocked(ctx, j.name, "", "wait", fmt.Sprintf("planning waits until %s (%s: %s); no attempt used", j.planWaitUntil.Local().Format("2006-01-02 15:04"), out.Class, out.Message))
		return
	case res.err != nil || out.Class != runtimes.ClassNone:
		f := sessionFailure("coordinator", res, "plan")
		replies := []problems.Verb{problems.Retry, problems.Hint, problems.Plan}
		switch f.kind {
		case problems.AuthRequired:
			replies = []problems.Verb{problems.Retry}
		case problems.ModelUnavailable:
			replies = []problems.Verb{problems.Retry, problems.Plan}
		default:
			if !j.planRetried {
				j.planRetried = true
				s.emitLocked(ctx, j.name, "", "retry", f.summary+"; planning again once automatically")
				return
			}
		}
		s.planProblemLocked(ctx, j, f, replies)
		return
	}
	_ = s.updateJobLocked(ctx, j, "", "", func(j *job) { j.planSession = out.SessionID }, nil)
	tasks, err := ParseCoordinatorPlan(j.name, out.FinalText)
	if err == nil {
		var current Plan
		if current, err = s.readPlan(); err == nil {
			err = current.Replace(j.name, tasks).Validate("the coordinator's plan", proj)
		}
	}
	if err != nil {
		j.planError = err.Error()
		s.planProblemLocked(ctx, j, failure{kind: problems.InvalidPlan, summary: "the coordinator's plan is invalid: " + planSummary(err),
			detail: err.Error(), logTail: out.FinalText}, nil)
		return
	}
	j.planRetried, j.planHint, j.planError = false, false, ""
	s.applyPlanLocked(ctx, j, tasks, snap.revision, true, "the coordinator")
}

// applyPlanLocked makes tasks the job's plan: new tasks are added pending,
// kept ones take their new entry, dropped unfinished ones are cancelled.
// With write set, .ai/tasks.yaml gets the job's new tasks. The caller holds s.mu.
func (s *Supervisor) applyPlanLocked(ctx context.Context, j *job, tasks []Task, revision int, write bool, source string) {
	ctx = context.WithoutCancel(ctx) // state writes finish even when the supervisor stops
	if write {
		current, err := s.readPlan()
		if err == nil {
			var data []byte
			if data, err = current.Replace(j.name, tasks).Marshal(); err == nil {
				err = atomicfile.Write(TasksPath(s.root), data, 0o644)
			}
		}
		if err != nil {
			s.planProblemLocked(ctx, j, failure{kind: problems.InvalidPlan, summary: "could not write .ai/tasks.yaml", detail: err.Error()}, nil)
			return
		}
	}
	base := j.base
	if base == "" {
		if h, err := git.Head(ctx, s.integrationDir()); err == nil {
			base = h
		}
	}
	now := s.clock.Now()
	ordered := Order(tasks)
	keep := map[string]bool{}
	var added []*task
	changed := map[*task]task{} // new values of existing tasks, applied once stored
	for i, spec := range ordered {
		keep[spec.ID] = true
		if old := j.byName[spec.ID]; old != nil {
			if s.running[old] != nil {
				// Its pipeline reads the task unlocked: the new entry waits for it to end.
				spec := spec
				old.nextSpec = &spec
				continue
			}
			cp := *old
			cp.spec, cp.seq = spec, i
			changed[old] = cp
			continue
		}
		added = append(added, &task{job: j, name: spec.ID, seq: i, spec: spec, state: Pending, step: stepBuild})
	}
	var stopping []*task
	dropped := 0
	for _, t := range j.tasks {
		if keep[t.name] || t.state.Terminal() {
			continue
		}
		if s.running[t] != nil {
			stopping = append(stopping, t)
			continue
		}
		cp := *t
		cp.state = Cancelled
		changed[t] = cp
		dropped++
	}
	nj := *j
	nj.plannedRevision, nj.replan, nj.planWords, nj.base = revision, false, "", base
	msg := fmt.Sprintf("planned by %s (revision %d): %d tasks", source, revision, len(tasks))
	if n := dropped + len(stopping); n > 0 {
		msg += fmt.Sprintf("; %d dropped", n)
	}
	e := &Event{Repo: s.repo.Name, Job: j.name, At: now, Kind: "plan", Message: msg}
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		for _, cp := range changed {
			if err := saveTask(ctx, tx, &cp, now); err != nil {
				return err
			}
		}
		for _, t := range added {
			if err := insertTask(ctx, tx, j, t, now); err != nil {
				return err
			}
		}
		if err := saveJob(ctx, tx, &nj, now); err != nil {
			return err
		}
		return insertEvent(ctx, tx, e)
	})
	if err != nil {
		s.log.Error("saving the plan", "job", j.name, "err", err)
		return
	}
	for t, cp := range changed {
		*t = cp
	}
	j.plannedRevision, j.replan, j.planWords, j.base = nj.plannedRevision, nj.replan, nj.planWords, nj.base
	for _, t := range added {
		j.tasks = append(j.tasks, t)
		j.byName[t.name] = t
	}
	for _, t := range stopping {
		t.dropped = true
		s.running[t]()
	}
	sortTasks(j)
	s.published(e)
}

// sortTasks keeps a job's tasks in plan order.
func sortTasks(j *job) {
	ts := j.tasks
	for i := 1; i < len(ts); i++ {
		for k := i; k > 0 && (ts[k].seq < ts[k-1].seq || (ts[k].seq == ts[k-1].seq && ts[k].id < ts[k-1].id)); k-- {
			ts[k], ts[k-1] = ts[k-1], ts[k]
		}
	}
}
