package supervisor

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/internal/yamlx"
)

// TasksPath is where a repository keeps its task graph.
func TasksPath(root string) string { return filepath.Join(root, ".ai", "tasks.yaml") }

// Kind says what sort of work a task is; RESEARCH runs read-only, without a worktree.
type Kind string

// The task kinds tasks.yaml accepts.
const (
	SafeParallel   Kind = "SAFE_PARALLEL"
	Dependent      Kind = "DEPENDENT"
	Hotspot        Kind = "HOTSPOT"
	Decouple       Kind = "DECOUPLE"
	ContractChange Kind = "CONTRACT_CHANGE"
	TestOnly       Kind = "TEST_ONLY"
	Research       Kind = "RESEARCH"
)

// Kinds lists every task kind in the order the docs show them.
var Kinds = []Kind{SafeParallel, Dependent, Hotspot, Decouple, ContractChange, TestOnly, Research}

// ReadOnly reports whether tasks of this kind run without a worktree and commit nothing.
func (k Kind) ReadOnly() bool { return k == Research }

// Task is one entry of .ai/tasks.yaml.
type Task struct {
	ID            string   `yaml:"id" json:"id"`
	JobID         string   `yaml:"job_id" json:"job_id"`
	Title         string   `yaml:"title,omitempty" json:"title,omitempty"`
	Description   string   `yaml:"description,omitempty" json:"description,omitempty"`
	Kind          Kind     `yaml:"kind" json:"kind"`
	Role          string   `yaml:"role,omitempty" json:"role,omitempty"`
	ExpectedPaths Paths    `yaml:"expected_paths,omitempty" json:"expected_paths,omitzero"`
	DependsOn     []string `yaml:"depends_on,omitempty" json:"depends_on,omitempty"`
	GateLevel     string   `yaml:"gate_level,omitempty" json:"gate_level,omitempty"`
	Runtime       string   `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Acceptance    []string `yaml:"acceptance,omitempty" json:"acceptance,omitempty"`
}

// Paths are the files a task may read and the ones it owns.
type Paths struct {
	Read  []string `yaml:"read,omitempty" json:"read,omitempty"`
	Write []string `yaml:"write,omitempty" json:"write,omitempty"`
}

// IsZero reports whether no path is named, so YAML and JSON leave it out.
func (p Paths) IsZero() bool { return len(p.Read) == 0 && len(p.Write) == 0 }

// Plan is the content of .ai/tasks.yaml: the tasks of every job.
type Plan struct {
	Tasks []Task `yaml:"tasks" json:"tasks"`
}

// ForJob returns the tasks of one job, in file order.
func (p Plan) ForJob(job string) []Task {
	var out []Task
	for _, t := range p.Tasks {
		if t.JobID == job {
			out = append(out, t)
		}
	}
	return out
}

// Replace returns the plan with job's tasks replaced by tasks, keeping the
// other jobs' tasks and their order.
func (p Plan) Replace(job string, tasks []Task) Plan {
	var out Plan
	for _, t := range p.Tasks {
		if t.JobID != job {
			out.Tasks = append(out.Tasks, t)
		}
	}
	out.Tasks = append(out.Tasks, tasks...)
	return out
}

// Marshal renders the plan as tasks.yaml.
func (p Plan) Marshal() ([]byte, error) {
	data, err := yaml.MarshalWithOptions(p, yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("rendering tasks.yaml: %w", err)
	}
	return append([]byte("# The task graph of agentkit's jobs (see docs/jobs.md).\n"), data...), nil
}

// ParsePlan decodes tasks.yaml content; name is used in errors. Unknown
// fields are refused with their line. It does not validate: see Validate.
func ParsePlan(name string, data []byte) (p Plan, err error) {
	// yamlx turns the decoder's panics on malformed input into errors: a
	// coordinator's answer must never take the supervisor down.
	if err := yamlx.Decode(data, &p); err != nil {
		return Plan{}, fmt.Errorf("%s: %s (a task takes id, job_id, title, description, kind, role, expected_paths, depends_on, gate_level, runtime, acceptance; see docs/jobs.md)", name, yaml.FormatError(err, false, false))
	}
	return p, nil
}

// FieldError is one thing wrong with a plan, naming the task and field.
type FieldError struct {
	Task  string
	Field string
	Msg   string
}

func (e FieldError) Error() string {
	if e.Task == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("task %q: %s: %s", e.Task, e.Field, e.Msg)
}

// PlanError lists everything wrong with a plan.
type PlanError struct {
	Name   string
	Errors []FieldError
}

func (e *PlanError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.Error()
	}
	if len(lines) == 1 {
		return fmt.Sprintf("%s: %s", e.Name, lines[0])
	}
	return fmt.Sprintf("%s has %d errors:\n  %s", e.Name, len(lines), strings.Join(lines, "\n  "))
}

// First returns the first error, for a one-line summary.
func (e *PlanError) First() FieldError { return e.Errors[0] }

var taskIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,95}$`)

// Validate checks the plan against the project's settings: ids, kinds,
// paths, dependencies (defined, in the same job, acyclic), gate levels and
// runtimes. It returns a *PlanError naming each task and field.
func (p Plan) Validate(name string, cfg project.Config) error {
	var errs []FieldError
	add := func(task, field, format string, args ...any) {
		errs = append(errs, FieldError{Task: task, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	byID := make(map[string]*Task, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		label := t.ID
		if label == "" {
			label = fmt.Sprintf("#%d", i+1)
		}
		switch {
		case t.ID == "":
			add(label, "id", "missing; give every task an id like calendar-store")
		case !taskIDRE.MatchString(t.ID):
			add(label, "id", "%q is not a task id: use lower-case letters, digits, '-' and '_', starting with a letter or digit, at most 96", t.ID)
		case byID[t.ID] != nil:
			add(label, "id", "defined twice; task ids are unique in tasks.yaml")
		default:
			byID[t.ID] = t
		}
		if t.JobID == "" {
			add(label, "job_id", "missing; name the job this task belongs to")
		} else if !jobNameRE.MatchString(t.JobID) {
			add(label, "job_id", "%q is not a job name", t.JobID)
		}
		if !validKind(t.Kind) {
			add(label, "kind", "%q is not a task kind; use one of %s", t.Kind, kindList())
		}
		for _, f := range []struct {
			field string
			paths []string
		}{{"expected_paths.read", t.ExpectedPaths.Read}, {"expected_paths.write", t.ExpectedPaths.Write}} {
			for _, path := range f.paths {
				if msg := checkPath(path); msg != "" {
					add(label, f.field, "%q %s", path, msg)
				}
			}
		}
		if t.GateLevel != "" {
			if _, ok := cfg.Gates[t.GateLevel]; !ok {
				add(label, "gate_level", "%q is not defined in .ai/project.yaml (gates defines: %s)", t.GateLevel, strings.Join(cfg.GateLevels(), ", "))
			}
		}
		if t.Runtime != "" && !isRuntimeName(t.Runtime) {
			add(label, "runtime", "%q is not a runtime; use one of %s", t.Runtime, strings.Join(project.RuntimeNames, ", "))
		}
		seen := map[string]bool{}
		for _, d := range t.DependsOn {
			if seen[d] {
				add(label, "depends_on", "%q is listed twice", d)
			}
			seen[d] = true
			if d == t.ID {
				add(label, "depends_on", "a task cannot depend on itself")
			}
		}
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if byID[t.ID] != t {
			continue
		}
		seen := map[string]bool{t.ID: true} // twice and self are reported above
		for _, d := range t.DependsOn {
			if seen[d] {
				continue
			}
			seen[d] = true
			dep := byID[d]
			switch {
			case dep == nil:
				add(t.ID, "depends_on", "unknown task %q (define it, or remove it from depends_on)", d)
			case dep.JobID != t.JobID:
				add(t.ID, "depends_on", "%q belongs to job %q, not %q; a task depends only on tasks of its own job", d, dep.JobID, t.JobID)
			}
		}
	}
	if cycle := findCycle(p.Tasks, byID); len(cycle) > 0 {
		add(cycle[0], "depends_on", "cycle: %s", strings.Join(cycle, " -> "))
	}
	if len(errs) > 0 {
		return &PlanError{Name: name, Errors: errs}
	}
	return nil
}

// checkPath says what is wrong with a path of expected_paths, or "".
func checkPath(p string) string {
	if strings.TrimSpace(p) == "" {
		return "is empty"
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') {
		return "is outside the repository: write it relative to the repository's root"
	}
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "is outside the repository"
	}
	if clean == ".git" || strings.HasPrefix(clean, ".git/") {
		return "is inside .git, which tasks never touch"
	}
	return ""
}

func validKind(k Kind) bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

func kindList() string {
	parts := make([]string, len(Kinds))
	for i, k := range Kinds {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}

func isRuntimeName(name string) bool {
	for _, n := range project.RuntimeNames {
		if n == name {
			return true
		}
	}
	return false
}
