package supervisor_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/supervisor"
)

var update = flag.Bool("update", false, "rewrite the golden .result files of testdata")

// testProject defines the gate levels the plans in testdata may name.
func testProject() project.Config {
	c := project.Default()
	c.Gates = map[string][]string{"fast": {"go test ./..."}, "full": {"go test -race ./..."}}
	return c
}

// planResult describes what loading a tasks.yaml gives, for golden files.
func planResult(name string, data []byte) string {
	p, err := supervisor.ParsePlan(name, data)
	if err != nil {
		return "parse error: " + err.Error() + "\n"
	}
	if err := p.Validate(name, testProject()); err != nil {
		return "invalid: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ok: %d tasks\n", len(p.Tasks))
	jobs := map[string]bool{}
	for _, t := range p.Tasks {
		if jobs[t.JobID] {
			continue
		}
		jobs[t.JobID] = true
		var ids []string
		for _, o := range supervisor.Order(p.ForJob(t.JobID)) {
			ids = append(ids, o.ID)
		}
		fmt.Fprintf(&b, "job %s: %s\n", t.JobID, strings.Join(ids, " "))
	}
	return b.String()
}

// golden runs fn over testdata/dir/*.ext and compares with the .result files.
func golden(t *testing.T, dir, ext string, fn func(name string, data []byte) string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*."+ext))
	must(t, err)
	if len(files) == 0 {
		t.Fatalf("no testdata in %s", dir)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		must(t, err)
		got := fn(filepath.Base(f), data)
		want := strings.TrimSuffix(f, "."+ext) + ".result"
		if *update {
			must(t, os.WriteFile(want, []byte(got), 0o644))
			continue
		}
		exp, err := os.ReadFile(want)
		must(t, err)
		if got != string(exp) {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", f, got, exp)
		}
	}
}

func TestPlanGolden(t *testing.T) {
	golden(t, "plans", "yaml", planResult)
}

func TestPlanErrorsNameTaskAndField(t *testing.T) {
	for _, c := range []struct{ yaml, task, field string }{
		{"tasks:\n  - {id: a, job_id: j, kind: NOPE}\n", "a", "kind"},
		{"tasks:\n  - {id: a, job_id: j, kind: SAFE_PARALLEL, expected_paths: {write: [../x]}}\n", "a", "expected_paths.write"},
		{"tasks:\n  - {id: a, job_id: j, kind: SAFE_PARALLEL, depends_on: [z]}\n", "a", "depends_on"},
		{"tasks:\n  - {id: a, job_id: j, kind: SAFE_PARALLEL, gate_level: slow}\n", "a", "gate_level"},
		{"tasks:\n  - {id: a, job_id: j, kind: SAFE_PARALLEL}\n  - {id: a, job_id: j, kind: SAFE_PARALLEL}\n", "a", "id"},
	} {
		p, err := supervisor.ParsePlan("t", []byte(c.yaml))
		must(t, err)
		err = p.Validate("t", testProject())
		pe, ok := err.(*supervisor.PlanError)
		if !ok {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if f := pe.First(); f.Task != c.task || f.Field != c.field {
			t.Errorf("%q: first error names %q/%q; want %q/%q", c.yaml, f.Task, f.Field, c.task, c.field)
		}
	}
}

func TestPlanRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/plans/02-two-jobs.yaml")
	must(t, err)
	p, err := supervisor.ParsePlan("x", data)
	must(t, err)
	out, err := p.Marshal()
	must(t, err)
	q, err := supervisor.ParsePlan("x", out)
	must(t, err)
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip changed the plan:\n%s", out)
	}
	// Replace keeps the other jobs' tasks and their order.
	r := p.Replace("search", []supervisor.Task{{ID: "new", JobID: "search", Kind: supervisor.SafeParallel}})
	var ids []string
	for _, task := range r.Tasks {
		ids = append(ids, task.ID)
	}
	if strings.Join(ids, " ") != "docs new" {
		t.Errorf("replace: %v", ids)
	}
}

func FuzzParsePlan(f *testing.F) {
	files, _ := filepath.Glob("testdata/plans/*.yaml")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	cfg := testProject()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := supervisor.ParsePlan("fuzz", data)
		if err != nil {
			return
		}
		if err := p.Validate("fuzz", cfg); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		// A valid plan orders every task after its dependencies.
		for _, t0 := range p.Tasks {
			ordered := supervisor.Order(p.ForJob(t0.JobID))
			pos := map[string]int{}
			for i, o := range ordered {
				pos[o.ID] = i
			}
			for _, o := range ordered {
				for _, d := range o.DependsOn {
					if pos[d] >= pos[o.ID] {
						t.Fatalf("%s ordered before its dependency %s", o.ID, d)
					}
				}
			}
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		q, err := supervisor.ParsePlan("again", out)
		if err != nil {
			t.Fatalf("a valid plan does not read back: %v\n%s", err, out)
		}
		if err := q.Validate("again", cfg); err != nil {
			t.Fatalf("a valid plan is invalid after a round trip: %v\n%s", err, out)
		}
	})
}
