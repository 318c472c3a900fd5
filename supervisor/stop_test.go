package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentkit/agentkit/supervisor"
)

// startGraceful runs a supervisor with a stop grace and returns its cancel
// and the channel Run's result arrives on.
func (w *world) startGraceful(grace time.Duration, log *lockedBuffer) (*supervisor.Supervisor, context.CancelFunc, chan error) {
	w.t.Helper()
	sup, err := supervisor.New(supervisor.Config{DB: w.db, Repo: w.repo, Env: os.Environ(), Poll: 100 * time.Millisecond, StopGrace: grace,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
		OnEvent: func(e supervisor.Event) {
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
		}})
	must(w.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	w.t.Cleanup(cancel)
	return sup, cancel, done
}

// lockedBuffer is a log the supervisor writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const oneTask = `tasks:
  - id: slow
    job_id: j1
    title: Take a while
    kind: SAFE_PARALLEL
`

// waitRun waits for Run to return.
func waitRun(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return")
	}
}

func TestStopGraceLetsTheRunningSessionFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	release := filepath.Join(w.dir, "release")
	// The builder waits for the test's word (or about a minute), then works.
	w.script("slow", `i=0; while [ ! -e "`+release+`" ] && [ $i -lt 2000 ]; do i=$((i+1)); sleep 0.03; done
echo slow > slow.txt
echo '{"agentkit": {"status": "done"}}'`)
	w.job("j1", oneTask)
	log := &lockedBuffer{}
	_, cancel, done := w.startGraceful(time.Minute, log)
	w.waitFor("the builder to start", func() bool { return w.calls("slow") == 1 })
	cancel()
	w.waitFor("the supervisor to let the session finish", func() bool {
		return strings.Contains(log.String(), "stopping: running sessions may finish")
	})
	w.mark("release")
	waitRun(t, done)
	r := w.task("j1", "slow")
	if w.hasEvent("slow", "interrupted") || r.State != "ready" || r.Step != "check" || r.Head == "" {
		t.Fatalf("the session did not finish its step: %+v\n%s", r, w.eventLog())
	}
	if !w.hasEvent("slow", "check waits: agentkit is stopping") {
		t.Errorf("no stopping event:\n%s", w.eventLog())
	}
	if n := w.runs("slow"); n != 0 {
		t.Errorf("the gate ran %d times after the stop", n)
	}
	// The next supervisor continues with the check, without building again.
	w.start()
	w.waitJobDone("j1")
	if n := w.calls("slow"); n != 1 {
		t.Errorf("the builder ran %d times", n)
	}
}

func TestStopGraceEndsThenStopsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.script("slow", `i=0; while [ $i -lt 4000 ]; do i=$((i+1)); sleep 0.03; done; echo late`)
	w.job("j1", oneTask)
	sup, cancel, done := w.startGraceful(time.Hour, &lockedBuffer{})
	w.waitFor("the builder to start", func() bool { return w.calls("slow") == 1 })
	// The service's stop command asks for a shorter grace than configured.
	sup.SetStopGrace(200 * time.Millisecond)
	cancel()
	waitRun(t, done)
	if !w.hasEvent("slow", "interrupted during build") {
		t.Fatalf("the session was not stopped after the grace:\n%s", w.eventLog())
	}
	pid := readPid(t, filepath.Join(w.dir, "calls", "slow.1.pid"))
	w.waitFor("the builder to be gone", func() bool { return !alive(pid) })
}

func TestJobDonePayloadSaysWhatMergedAndHow(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.job("j1", threeTasks)
	w.start()
	head := w.waitJobDone("j1")
	var raw string
	must(t, w.db.QueryRow("SELECT payload FROM outbox WHERE kind = 'job_done'").Scan(&raw))
	var p struct {
		Repo, Job, Summary, Detail, Branch, Head string
		Merged                                   int
	}
	must(t, json.Unmarshal([]byte(raw), &p))
	if p.Repo != "shop" || p.Job != "j1" || p.Head != head || p.Merged != 3 || p.Branch != "agentkit/integration" {
		t.Fatalf("payload %+v", p)
	}
	if p.Summary != "3 merged, 0 skipped, 0 cancelled; agentkit/integration is at "+head[:10] {
		t.Errorf("summary %q", p.Summary)
	}
	for _, want := range []string{"    store: Persist entries", "    api: Serve entries", "agentkit/integration is at commit\n    " + head + "\n",
		"    cd " + w.root, "    git log --oneline main..agentkit/integration", "    git switch main", "    git merge agentkit/integration"} {
		if !strings.Contains(p.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, p.Detail)
		}
	}
}
