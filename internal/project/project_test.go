package project

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultRoundTrip(t *testing.T) {
	data, err := Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("project.yaml", data)
	if err != nil {
		t.Fatalf("parse of default: %v\n%s", err, data)
	}
	if c.Workflow.Review != "once" || c.MaxWorkers != 2 || c.Runtimes.Default != "claude" || c.IntegrationBranch != "agentkit/integration" {
		t.Fatalf("round trip lost values: %+v", c)
	}
	if got := c.Gates["fast"]; len(got) != 1 || got[0] != "go test ./..." {
		t.Fatalf("gates: %v", c.Gates)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"workflow: {review: sometimes}\n", "workflow.review"},
		{"max_workers: -1\n", "max_workers"},
		{"integration_branch: main\n", "protected"},
		{"runtimes: {default: gpt}\n", "runtimes.default"},
		{"bogus: 1\n", "bogus"},
		{"max_workers: [1\n", "[1:"},
		{"gate_timeout: soon\n", "duration"},
	}
	for _, tc := range cases {
		_, err := Parse("p.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParseCommandRuntime(t *testing.T) {
	c, err := Parse("p.yaml", []byte("runtimes:\n  default: command\n  command: {argv: [\"./b.sh\", \"-x\"]}\ngate_timeout: 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := c.Runtimes.Runtime("command")
	if !ok || len(rc.Argv) != 2 || rc.Argv[0] != "./b.sh" {
		t.Fatalf("command runtime: %+v", rc)
	}
	if c.GateTimeout.Or(time.Hour) != 2*time.Minute {
		t.Fatalf("gate_timeout: %v", c.GateTimeout)
	}
	if c.Workflow.Review != "once" || c.MaxWorkers != 2 {
		t.Fatalf("defaults not filled: %+v", c)
	}
}

func TestParseEmptyIsDefaults(t *testing.T) {
	c, err := Parse("p.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxWorkers != 2 || c.Workflow.Review != "once" {
		t.Fatalf("%+v", c)
	}
}

func TestParseMalformedTagIsAnError(t *testing.T) {
	if _, err := Parse("p.yaml", []byte("gates: {fast: !x]}\n")); err == nil {
		t.Fatal("malformed YAML accepted")
	}
}
