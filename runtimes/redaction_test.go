package runtimes_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

// TestEventsRedacted: secret values (the phone password, secret-named
// variables of the parent, even allow-listed ones) and token shapes never
// reach the events log, the final text or the message.
func TestEventsRedacted(t *testing.T) {
	f := newFixture(t)
	const (
		phone    = "phone-pass-Zq81"
		ghToken  = "gh-value-not-a-known-shape-77"
		allowed  = "allowed-but-still-secret-42"
		apiShape = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wxyz"
	)
	f.setenv("GH_TOKEN="+ghToken, "ANTHROPIC_API_KEY="+allowed)
	f.scriptText(
		`{"type":"system","subtype":"init","session_id":"s-red"}`,
		"plain line with "+phone,
		"@stderr stderr with "+ghToken+" and "+allowed,
		"@stderr 401 Unauthorized: "+apiShape,
		`{"type":"result","subtype":"error_during_execution","is_error":true,"result":"failed; token was `+ghToken+`","session_id":"s-red"}`,
		"@exit 1",
	)
	opts := f.options()
	opts.Secrets = []string{phone}
	opts.AllowEnv = []string{"ANTHROPIC_API_KEY"}
	events := f.path("events.jsonl")
	out, err := f.runtimeWith("claude", project.RuntimeConfig{}, opts).Run(t.Context(), runtimes.Request{Dir: f.work, Prompt: "x", EventsPath: events})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(data), out.FinalText, out.Message} {
		for _, secret := range []string{phone, ghToken, allowed, apiShape} {
			if strings.Contains(s, secret) {
				t.Fatalf("secret %q leaked into %q", secret, s)
			}
		}
	}
	if n := strings.Count(string(data), "[REDACTED]"); n < 5 {
		t.Fatalf("expected every secret masked in the events log, found %d masks:\n%s", n, data)
	}
	if out.Class != runtimes.ClassAuth || out.Message != "401 Unauthorized: [REDACTED]" {
		t.Fatalf("outcome %+v", out)
	}
	if out.FinalText != "failed; token was [REDACTED]" {
		t.Fatalf("final text %q", out.FinalText)
	}
	// The request's own secret-named variables are masked too.
	f2 := newFixture(t)
	f2.scriptText("echo request-secret-value-9")
	out, err = f2.runtime("command", project.RuntimeConfig{Argv: []string{"fakecli"}}).
		Run(t.Context(), runtimes.Request{Dir: f2.work, Env: []string{"JOB_TOKEN=request-secret-value-9"}})
	if err != nil || out.FinalText != "echo [REDACTED]" {
		t.Fatalf("request secret: %q %v", out.FinalText, err)
	}
	if _, ok := f2.onlyCall().getenv("JOB_TOKEN"); ok {
		t.Fatal("a secret-named request variable reached the child")
	}
}
