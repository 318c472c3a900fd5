package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepositoryChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := TopLevel(ctx, dir); err == nil || !strings.Contains(err.Error(), "not inside a Git repository") {
		t.Fatalf("%v", err)
	}
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v", out, err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	top, err := TopLevel(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if top != want {
		t.Fatalf("top %q want %q", top, want)
	}
	if HasCommit(ctx, dir) {
		t.Fatal("empty repository has a commit")
	}
	if _, _, err := Author(ctx, dir); err == nil || !strings.Contains(err.Error(), "git config --global user.name") {
		t.Fatalf("%v", err)
	}
	Run(ctx, dir, "config", "user.name", "T")
	Run(ctx, dir, "config", "user.email", "t@x.test")
	if n, e, err := Author(ctx, dir); err != nil || n != "T" || e != "t@x.test" {
		t.Fatalf("%q %q %v", n, e, err)
	}
	if _, err := Run(ctx, dir, "commit", "-q", "--allow-empty", "-m", "one"); err != nil {
		t.Fatal(err)
	}
	if !HasCommit(ctx, dir) {
		t.Fatal("no commit seen")
	}
	_, err = Run(ctx, dir, "checkout", "no-such-branch")
	var ge *Error
	if err == nil || !strings.Contains(err.Error(), "no-such-branch") || !errorsAs(err, &ge) {
		t.Fatalf("%v", err)
	}
}

func errorsAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}
