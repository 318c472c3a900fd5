package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentkit/agentkit/internal/filelock"
)

// LockPath is the per-repository supervisor lock.
func LockPath(root string) string { return filepath.Join(root, ".ai", "runtime", "supervisor.lock") }

// ErrLocked says another supervisor already runs for the repository.
var ErrLocked = errors.New("supervisor: another supervisor runs for this repository")

// repoLock is the held lock of one repository; the operating system drops it
// when the process ends, however it ends.
type repoLock struct {
	l *filelock.Lock
}

// acquireLock takes the repository's lock without waiting and writes this
// process's id into it.
func acquireLock(root string) (*repoLock, error) {
	path := LockPath(root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	l, err := filelock.TryLock(path)
	if errors.Is(err, filelock.ErrLocked) {
		data, _ := os.ReadFile(path)
		pid := strings.TrimSpace(string(data))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w (pid %s, lock %s); stop it first, or let it run", ErrLocked, pid, path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the supervisor lock: %w", err)
	}
	_ = l.Note(strconv.Itoa(os.Getpid()) + "\n")
	return &repoLock{l: l}, nil
}

// release drops the lock.
func (l *repoLock) release() {
	if l == nil || l.l == nil {
		return
	}
	_ = l.l.Note("")
	_ = l.l.Unlock()
	l.l = nil
}
