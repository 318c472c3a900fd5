package runtimes_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/runtimes"
)

type classifyCase struct {
	Note    string `json:"note"`
	Runtime string `json:"runtime"`
	Final   string `json:"final"`
	Stderr  string `json:"stderr"`
	Exit    int    `json:"exit"`
	Zone    string `json:"zone"`
	Class   string `json:"class"`
	Reset   string `json:"reset"`
	Message string `json:"message"`
}

func loadClassifyCases(t testing.TB) []classifyCase {
	data, err := os.ReadFile(filepath.Join("testdata", "classify.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []classifyCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestClassify checks testdata/classify.json: real provider messages with
// their class and reset time, under a fixed clock (Wednesday 11 June 2025,
// 10:20 in Berlin) and time zone.
func TestClassify(t *testing.T) {
	for _, c := range loadClassifyCases(t) {
		t.Run(c.Note, func(t *testing.T) {
			loc := berlin
			if c.Zone != "" {
				loc = mustZone(c.Zone)
			}
			class, reset, msg := runtimes.Classify(c.Runtime, c.Final, c.Stderr, c.Exit, testNow.In(loc), loc)
			if string(class) != c.Class {
				t.Fatalf("class %q, want %q (message %q)", class, c.Class, msg)
			}
			var want time.Time
			if c.Reset != "" {
				var err error
				if want, err = time.Parse(time.RFC3339, c.Reset); err != nil {
					t.Fatal(err)
				}
			}
			if !reset.Equal(want) {
				t.Fatalf("reset %v, want %v", reset, want)
			}
			if class == runtimes.ClassNone {
				if msg != "" {
					t.Fatalf("success with message %q", msg)
				}
				return
			}
			norm := strings.ReplaceAll(c.Final+"\n"+c.Stderr, "’", "'")
			isLine := false
			for _, l := range strings.Split(norm, "\n") {
				isLine = isLine || strings.TrimSpace(l) == msg
			}
			if !isLine {
				t.Fatalf("message %q is not a line of the input", msg)
			}
			if c.Message != "" && msg != c.Message {
				t.Fatalf("message %q, want %q", msg, c.Message)
			}
		})
	}
}

// TestClassifyMessageRedacted: the deciding line loses its token shapes.
func TestClassifyMessageRedacted(t *testing.T) {
	_, _, msg := runtimes.Classify("claude", "", "401 Unauthorized: key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv was rejected", 1, testNow, berlin)
	if strings.Contains(msg, "sk-ant") || !strings.Contains(msg, "[REDACTED]") {
		t.Fatalf("message not redacted: %q", msg)
	}
}

// TestClassifyThroughFakes: each failure shape printed by a fake CLI ends in
// the right class and reset time.
func TestClassifyThroughFakes(t *testing.T) {
	cases := []struct {
		runtime, script string
		loc             *time.Location
		class           runtimes.Class
		reset           time.Time
		exit            int
	}{
		{"claude", "claude-usage-limit", berlin, runtimes.ClassUsageLimit, time.Date(2025, 6, 11, 15, 0, 0, 0, berlin), 1},
		// The zone the message names wins over the injected one; Claude's
		// rate_limit_event says the same instant.
		{"claude", "claude-hit-limit", newYork, runtimes.ClassUsageLimit, time.Date(2025, 6, 11, 15, 0, 0, 0, berlin), 1},
		// Claude may report an API error with exit status 0 and is_error.
		{"claude", "claude-rate-limit", berlin, runtimes.ClassRateLimit, time.Time{}, 0},
		{"claude", "claude-overloaded", berlin, runtimes.ClassProviderOutage, time.Time{}, 1},
		{"claude", "claude-auth", berlin, runtimes.ClassAuth, time.Time{}, 1},
		{"claude", "claude-model", berlin, runtimes.ClassModelUnavailable, time.Time{}, 1},
		{"claude", "claude-crash", berlin, runtimes.ClassCrash, time.Time{}, 1},
		{"codex", "codex-usage-limit", berlin, runtimes.ClassUsageLimit, testNow.Add(42 * time.Minute), 1},
		{"codex", "codex-usage-plus", berlin, runtimes.ClassUsageLimit, time.Date(2025, 6, 12, 9, 15, 0, 0, berlin), 1},
		{"codex", "codex-auth", berlin, runtimes.ClassAuth, time.Time{}, 1},
		{"opencode", "opencode-model", berlin, runtimes.ClassModelUnavailable, time.Time{}, 1},
		{"opencode", "opencode-rate", berlin, runtimes.ClassRateLimit, time.Time{}, 1},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			f := newFixture(t)
			f.script(c.script)
			opts := f.options()
			opts.Location = c.loc
			opts.Now = func() time.Time { return testNow.In(c.loc) }
			rt := f.runtimeWith(c.runtime, projectCfg(), opts)
			out, err := rt.Run(t.Context(), runtimes.Request{Dir: f.work, Prompt: "go"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Class != c.class || !out.ResetAt.Equal(c.reset) || out.ExitCode != c.exit {
				t.Fatalf("got class %q reset %v exit %d (message %q), want %q %v %d", out.Class, out.ResetAt, out.ExitCode, out.Message, c.class, c.reset, c.exit)
			}
			if out.Message == "" {
				t.Fatal("no message")
			}
		})
	}
}

// TestSuccessIsNotClassified: an agent that exits cleanly may talk about rate
// limits and 500 errors in its answer; that is still a success.
func TestSuccessIsNotClassified(t *testing.T) {
	f := newFixture(t)
	f.scriptText(`{"type":"result","subtype":"success","is_error":false,"result":"Handled HTTP 429 and 503: the client now backs off when rate limited.","session_id":"s1","usage":{"input_tokens":1,"output_tokens":1}}`)
	out := f.run("claude", projectCfg(), runtimes.Request{Prompt: "x"})
	if out.Class != runtimes.ClassNone || out.Message != "" {
		t.Fatalf("success classified as %q: %q", out.Class, out.Message)
	}
}

func FuzzClassify(f *testing.F) {
	for _, c := range loadClassifyCases(f) {
		f.Add(c.Runtime, c.Final, c.Stderr, c.Exit)
	}
	valid := map[runtimes.Class]bool{
		runtimes.ClassNone: true, runtimes.ClassUsageLimit: true, runtimes.ClassRateLimit: true,
		runtimes.ClassProviderOutage: true, runtimes.ClassAuth: true, runtimes.ClassModelUnavailable: true, runtimes.ClassCrash: true,
	}
	f.Fuzz(func(t *testing.T, runtime, final, stderr string, exit int) {
		class, reset, msg := runtimes.Classify(runtime, final, stderr, exit, testNow, berlin)
		if !valid[class] {
			t.Fatalf("invalid class %q", class)
		}
		if class == runtimes.ClassNone && (msg != "" || !reset.IsZero()) {
			t.Fatalf("success with message %q or reset %v", msg, reset)
		}
		if exit != 0 && class == runtimes.ClassNone {
			t.Fatal("a failed session classified as success")
		}
		if len(msg) > 600 {
			t.Fatalf("message of %d bytes", len(msg))
		}
	})
}
