package runtimes

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotFound says a runtime's CLI is not installed (or not where its pin says).
var ErrNotFound = errors.New("runtimes: CLI not found")

// findBinary returns the executable for name: the pin's value when the pin
// variable is set, else name looked up in PATH (both read through getenv).
func findBinary(name, pin string, getenv func(string) string) (string, error) {
	if pin != "" {
		if p := getenv(pin); p != "" {
			found, err := lookPath(p, getenv("PATH"))
			if err != nil {
				return "", fmt.Errorf("%w: %s=%s is not an executable file; fix or unset %s", ErrNotFound, pin, p, pin)
			}
			return found, nil
		}
	}
	found, err := lookPath(name, getenv("PATH"))
	if err != nil {
		hint := ""
		if pin != "" {
			hint = fmt.Sprintf(" or set %s to its path", pin)
		}
		return "", fmt.Errorf("%w: %s is not on PATH; install it%s", ErrNotFound, name, hint)
	}
	return found, nil
}

// lookPath finds file like exec.LookPath but in the given PATH value rather
// than the process's own, so tests and services can say where to look. A name
// with a path separator is checked as it is.
func lookPath(file, path string) (string, error) {
	if strings.ContainsAny(file, `/\`) {
		return exec.LookPath(file)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			// An empty or relative PATH entry would search the current
			// directory, which a repository under work controls.
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, file)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
