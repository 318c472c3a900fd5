package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentkit/agentkit/internal/atomicfile"
	"github.com/agentkit/agentkit/internal/filelock"
)

// Files names the service's files under the agentkit home.
type Files struct{ Home string }

// Lock is the file whose lock marks the one running service.
func (f Files) Lock() string { return filepath.Join(f.Home, "service.lock") }

// PID holds the running service's process id and start time.
func (f Files) PID() string { return filepath.Join(f.Home, "service.pid") }

// Log is the service's rotating log.
func (f Files) Log() string { return filepath.Join(f.Home, "service.log") }

// State is where the running service publishes what it hosts.
func (f Files) State() string { return filepath.Join(f.Home, "service.state.json") }

// PIDInfo is the content of service.pid.
type PIDInfo struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// probeWait is how long Acquire retries a lock that may only be probed.
const probeWait = time.Second

// ErrRunning means another service process holds the lock.
var ErrRunning = errors.New("the agentkit service is already running")

// Acquire takes the service lock and writes the pid file; the lock is held
// until Release or until the process ends.
func (f Files) Acquire(now time.Time) (*filelock.Lock, error) {
	if err := os.MkdirAll(f.Home, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", f.Home, err)
	}
	l, err := filelock.TryLock(f.Lock())
	// Running (service status, service start waiting for its child) takes
	// the lock for an instant to probe it; a service starting at that
	// instant waits for the probe to let go rather than give up.
	for deadline := time.Now().Add(probeWait); errors.Is(err, filelock.ErrLocked) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		l, err = filelock.TryLock(f.Lock())
	}
	if errors.Is(err, filelock.ErrLocked) {
		if info, err := f.ReadPID(); err == nil {
			return nil, fmt.Errorf("%w (pid %d, since %s); stop it with agentkit service stop", ErrRunning, info.PID, info.Started.Local().Format("2006-01-02 15:04"))
		}
		return nil, fmt.Errorf("%w; stop it with agentkit service stop", ErrRunning)
	}
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(PIDInfo{PID: os.Getpid(), Started: now.UTC()})
	if err := atomicfile.Write(f.PID(), data, 0o600); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// ReadPID reads the pid file.
func (f Files) ReadPID() (PIDInfo, error) {
	var info PIDInfo
	data, err := os.ReadFile(f.PID())
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("reading %s: %w", f.PID(), err)
	}
	return info, nil
}

// Running reports whether a service holds the lock, and its pid file.
func (f Files) Running() (bool, PIDInfo) {
	l, err := filelock.TryLock(f.Lock())
	if err == nil {
		l.Unlock()
		return false, PIDInfo{}
	}
	info, _ := f.ReadPID()
	return errors.Is(err, filelock.ErrLocked), info
}

// StopRequest is where agentkit service stop leaves the grace it asks for,
// read by the service when the stop signal arrives.
func (f Files) StopRequest() string { return filepath.Join(f.Home, "service.stop") }

// stopRequest is the content of the stop request file.
type stopRequest struct {
	Grace string    `json:"grace"`
	At    time.Time `json:"at"`
}

// RequestStop records the grace the next stop gives running sessions.
func (f Files) RequestStop(grace time.Duration, now time.Time) error {
	data, _ := json.Marshal(stopRequest{Grace: grace.String(), At: now.UTC()})
	return atomicfile.Write(f.StopRequest(), data, 0o600)
}

// TakeStopRequest reads and removes the stop request; ok is false when none
// was left (a stop by systemd, launchd or a plain signal).
func (f Files) TakeStopRequest() (grace time.Duration, ok bool) {
	data, err := os.ReadFile(f.StopRequest())
	if err != nil {
		return 0, false
	}
	_ = os.Remove(f.StopRequest())
	var r stopRequest
	if json.Unmarshal(data, &r) != nil {
		return 0, false
	}
	d, err := time.ParseDuration(r.Grace)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
