package supervisor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/supervisor"
)

// BenchmarkJob200 runs a job of 200 independent trivial tasks through the
// whole pipeline (work tree, command-runtime session, commit, task gate,
// merge, full gate, work tree removal) with 8 workers, and reports the
// supervisor's own overhead per task apart from git, gates and sessions.
// Run it with -benchtime=1x: one iteration is a whole job.
func BenchmarkJob200(b *testing.B) {
	const tasks = 200
	var plan strings.Builder
	plan.WriteString("tasks:\n")
	for i := range tasks {
		fmt.Fprintf(&plan, "  - {id: t%03d, job_id: big, kind: SAFE_PARALLEL}\n", i)
	}
	var sum supervisor.Stats
	var wall time.Duration
	for b.Loop() {
		b.StopTimer()
		w := newWorld(b, worldOpts{workers: 8})
		w.write(".ai/project.yaml", fmt.Sprintf(`workflow: {review: off}
gates: {fast: ["true"], full: ["true"]}
max_workers: 8
runtimes: {default: command, command: {argv: ["%s/agent.sh"]}}
`, w.dir))
		w.job("big", plan.String())
		ctx, cancel := context.WithCancel(context.Background())
		var problem string
		sup, err := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo, UntilDone: true, OnEvent: func(e supervisor.Event) {
			if e.Kind == "problem" && problem == "" {
				problem = e.Task + ": " + e.Message
				cancel()
			}
		}})
		must(b, err)
		b.StartTimer()
		start := time.Now()
		must(b, sup.Run(ctx))
		cancel()
		if problem != "" {
			b.Fatalf("a problem stopped the benchmark: %s", problem)
		}
		wall += time.Since(start)
		b.StopTimer()
		if st, _ := w.jobState("big"); st != "done" {
			b.Fatalf("job is %s", st)
		}
		st := sup.Stats()
		if st.Merged != tasks {
			b.Fatalf("%d merged", st.Merged)
		}
		sum.Pipeline += st.Pipeline
		sum.Session += st.Session
		sum.Git += st.Git
		sum.Gate += st.Gate
		sum.MergeWait += st.MergeWait
		sum.RepoWait += st.RepoWait
		sum.Scheduler += st.Scheduler
		sum.Merged += st.Merged
		b.StartTimer()
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(sum.Merged) }
	b.ReportMetric(per(wall), "wall-ms/task")
	b.ReportMetric(per(sum.Overhead()), "overhead-ms/task")
	b.ReportMetric(per(sum.Git), "git-ms/task")
	b.ReportMetric(per(sum.Gate), "gate-ms/task")
	b.ReportMetric(per(sum.Session), "session-ms/task")
	b.ReportMetric(per(sum.MergeWait), "mergewait-ms/task")
	b.ReportMetric(per(sum.RepoWait), "repowait-ms/task")
	b.ReportMetric(per(sum.Scheduler), "scheduler-ms/task")
}
