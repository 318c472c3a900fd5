//go:build !windows

package supervisor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
