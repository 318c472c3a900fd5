package project

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureGitignore(t *testing.T) {
	root := t.TempDir()
	changed, err := EnsureGitignore(root)
	if err != nil || !changed {
		t.Fatalf("%v %v", changed, err)
	}
	p := filepath.Join(root, ".ai", ".gitignore")
	if data, _ := os.ReadFile(p); string(data) != "runtime/\nworktrees/\n" {
		t.Fatalf("%q", data)
	}
	if changed, err := EnsureGitignore(root); err != nil || changed {
		t.Fatalf("second run changed it: %v %v", changed, err)
	}
	// The owner's own lines stay; an anchored form of ours counts as ours.
	os.WriteFile(p, []byte("*.log\n/runtime/"), 0o644)
	if changed, err := EnsureGitignore(root); err != nil || !changed {
		t.Fatalf("%v %v", changed, err)
	}
	if data, _ := os.ReadFile(p); string(data) != "*.log\n/runtime/\nworktrees/\n" {
		t.Fatalf("%q", data)
	}
}
