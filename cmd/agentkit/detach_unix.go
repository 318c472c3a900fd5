//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach makes the child its own session leader, so it outlives the shell.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// signalStop asks the service to stop gracefully.
func signalStop(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
