//go:build linux

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServiceStopGrace stops the service while a builder runs: with the
// stop's own short grace the session is stopped when it is over (and
// continues at the next start); with the service's long grace the session
// finishes its step before the service ends.
func TestServiceStopGrace(t *testing.T) {
	w := newSvcWorld(t)
	w.job("j1", "slow")
	must(t, os.WriteFile(filepath.Join(w.dir, "hold-slow"), nil, 0o644))
	svc, out := w.startBinary(w.repo, "service", "run", "--grace", "10m")
	w.mustRun(w.repo, "job", "start", "j1")
	w.waitFor("the builder to start", func() bool { return w.calls("slow") == 1 })

	// The stop asks for 1s: the builder, still held, is stopped after it.
	if o := w.mustRun(w.repo, "service", "stop", "--grace", "1s"); !strings.Contains(o, "Stopped the service") {
		t.Fatalf("stop: %s", o)
	}
	if code := waitExit(t, svc, out); code != 0 {
		t.Fatalf("service run exited %d:\n%s", code, out.String())
	}
	log := readFile(t, filepath.Join(w.home, "service.log"))
	if !strings.Contains(log, `"msg":"service stopping","grace":"1s"`) || !strings.Contains(log, "interrupted during build") {
		t.Fatalf("the stop's grace was not used:\n%s", log)
	}

	// Its own grace (10m) lets the continued session finish its step.
	svc, out = w.startBinary(w.repo, "service", "run", "--grace", "10m")
	w.waitFor("the builder to continue", func() bool { return w.calls("slow") == 2 })
	stop, stopOut := w.startBinary(w.repo, "service", "stop")
	w.waitFor("the service to wait for the session", func() bool {
		return strings.Contains(readFile(t, filepath.Join(w.home, "service.log")), `"msg":"stopping: running sessions may finish"`)
	})
	must(t, os.WriteFile(filepath.Join(w.dir, "release-slow.2"), nil, 0o644))
	if code := waitExit(t, stop, stopOut); code != 0 || !strings.Contains(stopOut.String(), "Stopped the service") {
		t.Fatalf("stop exited %d: %s", code, stopOut.String())
	}
	if code := waitExit(t, svc, out); code != 0 {
		t.Fatalf("service run exited %d:\n%s", code, out.String())
	}
	log = readFile(t, filepath.Join(w.home, "service.log"))
	if strings.Count(log, "interrupted during build") != 1 || !strings.Contains(log, "check waits: agentkit is stopping") {
		t.Fatalf("the session did not finish its step:\n%s", log)
	}
	// The next start goes on with the check, without building again.
	w.mustRun(w.repo, "service", "start")
	w.waitFor("the job to be done", func() bool { return w.count("SELECT count(*) FROM jobs WHERE state = 'done'") == 1 })
	if n := w.calls("slow"); n != 2 {
		t.Errorf("the builder ran %d times, want 2", n)
	}
}
