package runtimes_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// BenchmarkCommandSession measures a command-runtime session of a program
// that does nothing (true), next to exec'ing the same program directly: the
// difference is what starting and finishing a session costs (pipes, process
// group, events log, redaction, classification).
func BenchmarkCommandSession(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true program on PATH")
	}
	dir := b.TempDir()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runtime", func(b *testing.B) {
		rt, err := runtimes.New("command", project.RuntimeConfig{Argv: []string{truePath}}, runtimes.Options{
			Env: []string{"PATH=" + filepath.Dir(truePath), "HOME=" + dir},
		})
		if err != nil {
			b.Fatal(err)
		}
		req := runtimes.Request{Dir: dir, Prompt: "build it", Session: "bench", EventsPath: filepath.Join(dir, "events.jsonl")}
		for b.Loop() {
			out, err := rt.Run(context.Background(), req)
			if err != nil || out.ExitCode != 0 || out.Class != runtimes.ClassNone {
				b.Fatalf("%+v %v", out, err)
			}
		}
		b.StopTimer()
		os.Remove(req.EventsPath)
	})
}
