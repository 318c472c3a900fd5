//go:build windows

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// detach starts the child without a console, in its own process group.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}

// signalStop ends the service; Windows has no SIGTERM to send another process.
func signalStop(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
