package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockPath is the per-repository supervisor lock.
func LockPath(root string) string { return filepath.Join(root, ".ai", "runtime", "supervisor.lock") }

// ErrLocked says another supervisor already runs for the repository.
var ErrLocked = errors.New("supervisor: another supervisor runs for this repository")

// repoLock is the held lock of one repository; the operating system drops it
// when the process ends, however it ends.
type repoLock struct {
	f *os.File
}

// acquireLock takes the repository's lock without waiting and writes this
// process's id into it.
func acquireLock(root string) (*repoLock, error) {
	path := LockPath(root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the supervisor lock %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(data))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w (pid %s, lock %s); stop it first, or let it run", ErrLocked, pid, path)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &repoLock{f: f}, nil
}

// release drops the lock.
func (l *repoLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = unlockFile(l.f)
	_ = l.f.Close()
	l.f = nil
}
