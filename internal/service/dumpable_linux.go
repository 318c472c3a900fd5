package service

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MakeNonDumpable stops other processes of the same user (the agents among
// them) from reading this process's memory or environment through ptrace or
// /proc/PID/mem and /proc/PID/environ.
func MakeNonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the service non-dumpable: %w", err)
	}
	return nil
}

// Dumpable reports the process's dumpable flag.
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return v != 0, err
}
