package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/runtimes"
)

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		class runtimes.Class
		waits int
		want  time.Duration
	}{
		{runtimes.ClassUsageLimit, 0, 30 * time.Minute},
		{runtimes.ClassUsageLimit, 1, 15 * time.Minute},
		{runtimes.ClassUsageLimit, 2, 30 * time.Minute},
		{runtimes.ClassUsageLimit, 3, time.Hour},
		{runtimes.ClassUsageLimit, 9, time.Hour},
		{runtimes.ClassRateLimit, 0, time.Minute},
		{runtimes.ClassRateLimit, 3, 8 * time.Minute},
		{runtimes.ClassProviderOutage, 5, 30 * time.Minute},
		{runtimes.ClassProviderOutage, 50, 30 * time.Minute},
	} {
		if got := backoff(c.class, c.waits); got != c.want {
			t.Errorf("backoff(%s, %d) = %s; want %s", c.class, c.waits, got, c.want)
		}
	}
}

func TestSetupSignature(t *testing.T) {
	a := setupSignature(problems.SetupFailed, "  npm is   not installed\nsecond line")
	b := setupSignature(problems.SetupFailed, "npm is not installed\nother detail")
	if a != b || a != "setup_failed: npm is not installed" {
		t.Errorf("%q %q", a, b)
	}
	if setupSignature(problems.AuthRequired, "npm is not installed") == a {
		t.Error("different kinds share a signature")
	}
	if setupSignature(problems.GateFailed, "x") != "" {
		t.Error("a gate failure is not a setup problem")
	}
}

func TestLockIsExclusive(t *testing.T) {
	root := t.TempDir()
	l, err := acquireLock(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acquireLock(root); err == nil || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("second lock: %v", err)
	}
	l.release()
	l2, err := acquireLock(root)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.release()
	if _, err := os.Stat(filepath.Join(root, ".ai", "runtime", "supervisor.lock")); err != nil {
		t.Error(err)
	}
}

func TestDependents(t *testing.T) {
	j := &job{byName: map[string]*task{}}
	for _, spec := range []Task{{ID: "a"}, {ID: "b", DependsOn: []string{"a"}}, {ID: "c", DependsOn: []string{"b"}}, {ID: "d", DependsOn: []string{"a", "c"}}, {ID: "e"}} {
		tk := &task{name: spec.ID, spec: spec, state: Pending}
		j.tasks = append(j.tasks, tk)
	}
	if got := strings.Join(dependents(j, "a"), " "); got != "b d c" {
		t.Errorf("dependents: %q", got)
	}
}
