package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentkit/agentkit/internal/atomicfile"
)

// IgnoredDirs are the folders of .ai/ that never belong in Git.
var IgnoredDirs = []string{"runtime/", "worktrees/"}

// EnsureGitignore adds IgnoredDirs to <root>/.ai/.gitignore, keeping whatever
// else the owner wrote there, and reports whether it changed the file.
func EnsureGitignore(root string) (bool, error) {
	path := filepath.Join(root, ".ai", ".gitignore")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimPrefix(strings.TrimSpace(l), "/")] = true
	}
	content := string(old)
	changed := false
	for _, l := range IgnoredDirs {
		if have[l] {
			continue
		}
		if content != "" && !strings.HasSuffix(content, "\n") {
			content += "\n"
		}
		content += l + "\n"
		changed = true
	}
	if !changed {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	return true, atomicfile.Write(path, []byte(content), 0o644)
}
