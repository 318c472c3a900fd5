package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServiceStartStatusStop(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	t.Cleanup(func() { e.run(dir, "service", "stop") })
	if out := e.mustRun(dir, "service", "status"); !strings.Contains(out, "not running") {
		t.Fatalf("%s", out)
	}
	out := e.mustRun(dir, "service", "start")
	if !strings.Contains(out, "Started the service (pid") {
		t.Fatalf("%s", out)
	}
	if out := e.mustRun(dir, "service", "start"); !strings.Contains(out, "already running") {
		t.Fatalf("second start: %s", out)
	}
	if _, errOut, code := e.run(dir, "service", "run"); code == 0 || !strings.Contains(errOut, "already running") {
		t.Fatalf("a second service ran: %d %s", code, errOut)
	}
	var st struct {
		Running bool `json:"running"`
		PID     int  `json:"pid"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(dir, "service", "status", "--json")), &st); err != nil || !st.Running || st.PID == 0 {
		t.Fatalf("%+v %v", st, err)
	}
	if data, err := os.ReadFile("/proc/" + itoa(st.PID) + "/status"); err == nil && !strings.Contains(string(data), "agentkit") {
		t.Fatalf("pid %d is not agentkit", st.PID)
	}
	if out := e.mustRun(dir, "service", "stop"); !strings.Contains(out, "Stopped the service") {
		t.Fatalf("%s", out)
	}
	if out := e.mustRun(dir, "service", "status"); !strings.Contains(out, "not running") {
		t.Fatalf("after stop: %s", out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "service.pid")); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(e.home, "service.log"))
	if !strings.Contains(string(log), "service started") || !strings.Contains(string(log), "service stopped") {
		t.Fatalf("log:\n%s", log)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
