package realmail

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// sysProcAttr starts a daemon in a process group of its own, which it leads,
// and has the kernel stop it when the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// terminate asks one process to shut down.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// termGroup asks every process left in a process group to shut down.
func termGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
}

// killGroup kills every process left in a process group.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// groupAlive reports whether a process that is not a zombie is still in the
// process group pgid. Zombies are ignored: an orphan's zombie is the init
// process's to reap, and in a container that may never happen.
func groupAlive(pgid int) bool { return len(groupPIDs(pgid)) > 0 }

// groupPIDs lists the live (not zombie) processes in the process group pgid.
func groupPIDs(pgid int) []int {
	var pids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process has gone
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			pids = append(pids, pid)
		}
	}
	return pids
}
