//go:build !unix

package main

import "os/exec"

// detach does nothing where sessions do not exist; the tests that use it run on Unix only.
func detach(cmd *exec.Cmd) {}
