package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// identity gives git an author for the test.
func identity(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWorktreesBranchesAndCommits(t *testing.T) {
	identity(t)
	ctx := context.Background()
	repo := t.TempDir()
	mustGit(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	if made, err := CommitAll(ctx, repo, "first"); err != nil || !made {
		t.Fatalf("first commit: %v %v", made, err)
	}
	first, err := Head(ctx, repo)
	if err != nil || len(first) != 40 {
		t.Fatalf("head %q %v", first, err)
	}
	if made, err := CommitAll(ctx, repo, "nothing"); err != nil || made {
		t.Fatalf("a clean tree was committed: %v %v", made, err)
	}
	if BranchExists(ctx, repo, "work") {
		t.Fatal("branch exists before it is made")
	}
	wt := filepath.Join(repo, ".ai", "worktrees", "task")
	if err := AddWorktree(ctx, repo, wt, "work", "main"); err != nil {
		t.Fatal(err)
	}
	if !IsWorktree(ctx, repo, wt) || CurrentBranch(ctx, wt) != "work" || !BranchExists(ctx, repo, "work") {
		t.Fatal("the work tree is not on its branch")
	}
	if IsWorktree(ctx, repo, filepath.Join(repo, ".ai")) {
		t.Fatal("a plain folder counted as a work tree")
	}
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "new.txt"), []byte("new\n"), 0o644)
	if files, _ := ChangedTracked(ctx, wt); len(files) != 1 || files[0] != "a.txt" {
		t.Fatalf("changed tracked files: %v", files)
	}
	if made, err := CommitAll(ctx, wt, "task work"); err != nil || !made {
		t.Fatalf("%v %v", made, err)
	}
	head, _ := Head(ctx, wt)
	if !IsAncestor(ctx, repo, first, head) || IsAncestor(ctx, repo, head, first) {
		t.Fatal("ancestry is wrong")
	}
	if files, _ := Files(ctx, wt); strings.Join(files, " ") != "a.txt new.txt" {
		t.Fatalf("files %v", files)
	}
	// A conflicting merge leaves its files to resolve; CommitAll concludes it.
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("main side\n"), 0o644)
	CommitAll(ctx, repo, "main side")
	if _, err := Run(ctx, wt, "merge", "--no-edit", "main"); err == nil {
		t.Fatal("the merge did not conflict")
	}
	if !MergeInProgress(ctx, wt) || strings.Join(ConflictedFiles(ctx, wt), " ") != "a.txt" {
		t.Fatalf("conflicts: %v", ConflictedFiles(ctx, wt))
	}
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("resolved\n"), 0o644)
	if made, err := CommitAll(ctx, wt, "resolve"); err != nil || !made || MergeInProgress(ctx, wt) {
		t.Fatalf("concluding the merge: %v %v", made, err)
	}
	if err := ResetHard(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	if h, _ := Head(ctx, wt); h != head {
		t.Fatal("reset did not move the branch")
	}
	if _, err := RevParse(ctx, repo, "work"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatal("the work tree folder is still there")
	}
	if err := RemoveWorktree(ctx, repo, wt); err != nil {
		t.Fatalf("removing a removed work tree: %v", err)
	}
	// A work tree folder deleted by hand does not block adding it again.
	if err := AddWorktree(ctx, repo, wt, "work", ""); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(wt)
	if err := AddWorktree(ctx, repo, wt, "work", ""); err != nil {
		t.Fatalf("re-adding after a manual removal: %v", err)
	}
	RemoveWorktree(ctx, repo, wt)
	if err := DeleteBranch(ctx, repo, "work"); err != nil || BranchExists(ctx, repo, "work") {
		t.Fatalf("delete: %v", err)
	}
	if err := CreateBranch(ctx, repo, "agentkit/integration", "HEAD"); err != nil || !BranchExists(ctx, repo, "agentkit/integration") {
		t.Fatalf("create: %v", err)
	}
}
