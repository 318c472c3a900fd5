//go:build linux

package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// killOrphans kills the process groups of the processes whose environment
// carries the attempt's token (a session a dead supervisor left running) and
// returns how many processes it found.
func killOrphans(token string) int {
	if token == "" {
		return 0
	}
	needle := []byte(AttemptEnv + "=" + token + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	ownGroup, _ := syscall.Getpgid(self)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), needle) {
			continue
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != ownGroup {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(orphanWait)
	for _, pid := range pids {
		for time.Now().Before(deadline) && running(pid) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return len(pids)
}

// running reports whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}
