package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRuntimesFlags(t *testing.T) {
	var got *runtimesOptions
	ios := &ioStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	cmd := newCmdRuntimes(ios, func(o *runtimesOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || !got.JSON || got.IO != ios {
		t.Fatalf("options %+v", got)
	}

	var stderr bytes.Buffer
	if code := run([]string{"runtimes", "extra"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "no arguments") {
		t.Fatalf("extra argument: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"runtimes", "--bogus"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("unknown flag: exit %d, %q", code, stderr.String())
	}
}

// fakeCLI writes an executable script that prints a version.
func fakeCLI(t *testing.T, dir, name, version string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRuntimesList(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake CLIs are shell scripts")
	}
	repo := t.TempDir()
	bin := filepath.Join(repo, "bin")
	pinned := filepath.Join(repo, "pinned")
	for _, d := range []string{bin, pinned, filepath.Join(repo, ".ai"), filepath.Join(repo, "scripts"), filepath.Join(repo, "sub", "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	claude := fakeCLI(t, bin, "claude", "2.0.14 (Claude Code)")
	opencode := fakeCLI(t, pinned, "opencode-dev", "0.15.3")
	builder := fakeCLI(t, filepath.Join(repo, "scripts"), "builder.sh", "must not run")
	yaml := "runtimes:\n  default: command\n  command: {argv: [\"./scripts/builder.sh\"]}\n"
	if err := os.WriteFile(filepath.Join(repo, ".ai", "project.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin, "AGENTKIT_OPENCODE_CLI=" + opencode, "AGENTKIT_PHONE_PASSWORD=x"}

	var out bytes.Buffer
	opts := &runtimesOptions{IO: &ioStreams{Out: &out}, Dir: filepath.Join(repo, "sub", "dir"), Env: env, JSON: true}
	if err := runtimesRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got []runtimeStatus
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []runtimeStatus{
		{Name: "claude", Found: true, Path: claude, Version: "2.0.14 (Claude Code)"},
		{Name: "codex", Error: "codex is not on PATH; install it or set AGENTKIT_CODEX_CLI to its path"},
		{Name: "opencode", Found: true, Path: opencode, Version: "0.15.3"},
		{Name: "command", Found: true, Path: builder},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	out.Reset()
	opts.JSON = false
	if err := runtimesRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "RUNTIME") {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, wantCols := range [][]string{
		{"claude", "yes", claude, "2.0.14 (Claude Code)"},
		{"codex", "no", "-", "codex is not on PATH"},
		{"opencode", "yes", opencode, "0.15.3"},
		{"command", "yes", builder, "-"},
	} {
		for _, col := range wantCols {
			if !strings.Contains(lines[i+1], col) {
				t.Errorf("line %q lacks %q", lines[i+1], col)
			}
		}
	}
}

func TestRuntimesDefaultsAndBadProject(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	opts := &runtimesOptions{IO: &ioStreams{Out: &out}, Dir: dir, Env: []string{"PATH=" + dir}, JSON: true}
	if err := runtimesRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got []runtimeStatus
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[3].Name != "command" || got[3].Found || !strings.Contains(got[3].Error, "runtimes.command.argv") {
		t.Fatalf("without a project: %+v", got)
	}

	if err := os.MkdirAll(filepath.Join(dir, ".ai"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ai", "project.yaml"), []byte("runtimes: {default: gemini}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runtimesRun(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "runtimes.default") {
		t.Fatalf("bad project.yaml: %v", err)
	}
}
