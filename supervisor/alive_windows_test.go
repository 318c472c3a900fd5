//go:build windows

package supervisor_test

import "os"

// alive reports whether pid runs.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
