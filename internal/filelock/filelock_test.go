package filelock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file description, so a second open in
	// the same process conflicts just as another process would.
	if _, err := TryLock(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := TryLock(p)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	if os.Getenv("FILELOCK_CHILD") != "" {
		_, err := TryLock(os.Getenv("FILELOCK_CHILD"))
		if errors.Is(err, ErrLocked) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	cmd := exec.Command(os.Args[0], "-test.run=TestLockHeldByAnotherProcess")
	cmd.Env = append(os.Environ(), "FILELOCK_CHILD="+p)
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child did not see the lock held: %v", err)
	}
}
