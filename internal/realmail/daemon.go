package realmail

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// How long a server may take to come up, to shut down, and how often its
// readiness is probed. Generous: CI machines are slow and shared.
const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
	pollInterval = 20 * time.Millisecond
)

// daemon is one server's master process, run in the foreground in a process
// group of its own so that stopping it can wait for every process it forked.
type daemon struct {
	name    string   // "Dovecot" or "Postfix", for messages
	path    string   // the master binary
	args    []string // its arguments
	outFile string   // where its stdout and stderr go
	logFile string   // the server's own log

	cmd  *exec.Cmd
	done chan struct{} // closed once the master process has exited
}

// start starts the master process; it does not wait for the server to be
// ready (see waitReady).
func (d *daemon) start() error {
	if d.cmd != nil {
		return fmt.Errorf("realmail: %s is already running", d.name)
	}
	out, err := os.OpenFile(d.outFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("realmail: opening %s's output file: %w", d.name, err)
	}
	defer out.Close()
	cmd := exec.Command(d.path, d.args...)
	// A fixed environment: nothing of the test's (tokens, passwords) reaches
	// the servers.
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out // a file, so Wait does not wait for the children
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("realmail: starting %s (%s): %w", d.name, d.path, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	d.cmd, d.done = cmd, done
	return nil
}

// waitReady waits until every probe succeeds, failing early when the master
// process exits.
func (d *daemon) waitReady(probes ...func() error) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		var err error
		for _, probe := range probes {
			if err = probe(); err != nil {
				break
			}
		}
		if err == nil {
			// Answered, and by this master: it has not died of a clash
			// with another server on one of its ports.
			select {
			case <-d.done:
			default:
				return nil
			}
		}
		select {
		case <-d.done:
			return fmt.Errorf("realmail: %s exited while starting (%v)%s", d.name, d.cmd.ProcessState, d.diagnostics())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("realmail: %s not ready after %v: %v%s", d.name, readyTimeout, err, d.diagnostics())
		}
	}
}

// stop asks the master to shut down and waits until it and every process it
// started have gone, killing what is left after stopTimeout.
func (d *daemon) stop() error {
	if d.cmd == nil {
		return nil
	}
	pgid := d.cmd.Process.Pid
	defer func() { d.cmd, d.done = nil, nil }()
	if terminate(pgid) != nil {
		killGroup(pgid)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-d.done:
	case <-timer.C:
		killGroup(pgid)
		<-d.done
	}
	// The master is gone. Its helpers (Dovecot's log and auth processes)
	// would linger for half a minute before noticing: ask them to go now,
	// then kill stragglers, so no process of this test outlives it.
	termGroup(pgid)
	if waitGone(pgid, stopTimeout/3) {
		return nil
	}
	killGroup(pgid)
	if waitGone(pgid, stopTimeout) {
		return nil
	}
	return fmt.Errorf("realmail: processes of %s (process group %d) survive SIGKILL", d.name, pgid)
}

// died returns an error when the master, started and not stopped, has
// exited by itself.
func (d *daemon) died() error {
	if d.cmd == nil {
		return nil
	}
	select {
	case <-d.done:
		return fmt.Errorf("realmail: %s exited by itself during the test (%v)%s", d.name, d.cmd.ProcessState, d.diagnostics())
	default:
		return nil
	}
}

// kill kills the master and every process it started at once, for the end
// of a test, when nothing they would finish is wanted, and waits until they
// have gone.
func (d *daemon) kill() error {
	if d.cmd == nil {
		return nil
	}
	pgid := d.cmd.Process.Pid
	defer func() { d.cmd, d.done = nil, nil }()
	killGroup(pgid)
	<-d.done
	if waitGone(pgid, stopTimeout) {
		return nil
	}
	return fmt.Errorf("realmail: processes of %s (process group %d) survive SIGKILL", d.name, pgid)
}

// waitGone waits until no live process is left in the process group.
func waitGone(pgid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval) // polling a condition, with a deadline
	}
	return true
}

// diagnostics returns the tail of the server's output and log, to put in an
// error message.
func (d *daemon) diagnostics() string {
	var b strings.Builder
	for _, f := range []struct{ what, path string }{{"output", d.outFile}, {"log", d.logFile}} {
		if t := tailFile(f.path, 25); t != "" {
			fmt.Fprintf(&b, "\n--- %s %s (%s):\n%s", d.name, f.what, f.path, t)
		}
	}
	return b.String()
}

// tailFile returns the last n lines of a file, or "" when it cannot be read.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
