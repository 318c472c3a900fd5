package runtimes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/project"
	"github.com/agentkit/agentkit/runtimes"
)

func TestChildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin",
		"HOME=/home/owner",
		"AGENTKIT_PHONE_PASSWORD=phone-secret",
		"GITHUB_TOKEN=ghp_x",
		"ANTHROPIC_API_KEY=sk-ant-x",
		"db_password=lower",
		"SSH_AUTH_SOCK=/tmp/agent.sock",
		"AGENTKIT_TASK=stale",
		"PATH=/dup/ignored",
	}
	got := runtimes.ChildEnv(parent,
		[]string{"ANTHROPIC_API_KEY", "AGENTKIT_PHONE_PASSWORD"},
		[]string{"AGENTKIT_TASK=calendar-store", "AGENTKIT_JOB=first-draft", "EXTRA_SECRET=no", "AGENTKIT_JOB=second"})
	want := []string{
		"PATH=/usr/bin",
		"HOME=/home/owner",
		"ANTHROPIC_API_KEY=sk-ant-x", // allow-listed
		"SSH_AUTH_SOCK=/tmp/agent.sock",
		"AGENTKIT_TASK=calendar-store",
		"AGENTKIT_JOB=second",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ChildEnv\n got %q\nwant %q", got, want)
	}
}

// TestChildSeesNoSecrets: the environment a real child gets holds none of its
// parent's secrets (names or values), only what the project allows, plus the
// AGENTKIT_* task variables.
func TestChildSeesNoSecrets(t *testing.T) {
	f := newFixture(t)
	secrets := map[string]string{
		"AGENTKIT_PHONE_PASSWORD": "correct-horse-battery",
		"GITHUB_TOKEN":            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"OPENAI_API_KEY":          "sk-proj-abcdefghijklmnopqrstuvwxyz",
		"AWS_SECRET_ACCESS_KEY":   "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
		"PGPASSWORD":              "pg-password-value",
		"npm_config__authToken":   "npm-token-value",
	}
	for k, v := range secrets {
		f.setenv(k + "=" + v)
	}
	f.setenv("ANTHROPIC_API_KEY=sk-ant-allowed-for-agents", "EDITOR=vi")
	f.scriptText("ok")
	opts := f.options()
	opts.AllowEnv = []string{"ANTHROPIC_API_KEY", "AGENTKIT_PHONE_PASSWORD"} // the phone password can never be allowed
	opts.Secrets = []string{"correct-horse-battery"}
	rt := f.runtimeWith("claude", project.RuntimeConfig{Model: "claude-sonnet-4-5"}, opts)
	_, err := rt.Run(t.Context(), runtimes.Request{
		Dir: f.work, Prompt: "x", Role: runtimes.RoleReadOnly, Resume: "sess-1",
		Env: []string{"AGENTKIT_TASK=calendar-store", "AGENTKIT_JOB=first-draft", "AGENTKIT_ROOT=/repo", "AGENTKIT_ROLE=reviewer"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := f.onlyCall()
	all := strings.Join(c.Env, "\n")
	for k, v := range secrets {
		if _, ok := c.getenv(k); ok {
			t.Errorf("child sees %s", k)
		}
		if strings.Contains(all, v) {
			t.Errorf("child sees the value of %s", k)
		}
	}
	for k, want := range map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-allowed-for-agents",
		"EDITOR":            "vi",
		"PATH":              binDir,
		"AGENTKIT_TASK":     "calendar-store",
		"AGENTKIT_JOB":      "first-draft",
		"AGENTKIT_ROOT":     "/repo",
		"AGENTKIT_ROLE":     "reviewer", // the caller's words win over the runtime's role
		"AGENTKIT_MODEL":    "claude-sonnet-4-5",
		"AGENTKIT_SESSION":  "sess-1",
	} {
		if got, _ := c.getenv(k); got != want {
			t.Errorf("child %s=%q, want %q", k, got, want)
		}
	}
}
