//go:build !linux

package realmail

import (
	"errors"
	"syscall"
)

// sysProcAttr is never used off Linux: Start skips first.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate is never used off Linux: Start skips first.
func terminate(int) error { return errors.ErrUnsupported }

// termGroup is never used off Linux: Start skips first.
func termGroup(int) {}

// killGroup is never used off Linux: Start skips first.
func killGroup(int) {}

// groupAlive is never used off Linux: Start skips first.
func groupAlive(int) bool { return false }
