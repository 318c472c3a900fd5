//go:build unix

package runtimes

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setGroupAttr makes the child the leader of a new process group.
func setGroupAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// group is a session's process group, whose id is the leader's pid.
type group struct{ pgid int }

func newGroup(p *os.Process) *group { return &group{pgid: p.Pid} }

// terminate sends SIGTERM to every process of the group.
func (g *group) terminate() error { return syscall.Kill(-g.pgid, syscall.SIGTERM) }

// kill sends SIGKILL to every process of the group.
func (g *group) kill() error { return syscall.Kill(-g.pgid, syscall.SIGKILL) }

// alive reports whether a process of the group is still running.
func (g *group) alive() bool {
	if err := syscall.Kill(-g.pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// Exited processes whose parent has not reaped them yet still count for
	// kill(2); they run nothing, so they do not keep a session alive.
	return groupHasRunning(g.pgid)
}

func (g *group) close() {}
