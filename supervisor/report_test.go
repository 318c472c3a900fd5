package supervisor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/supervisor"
)

func reportResult(_ string, data []byte) string {
	r, ok := supervisor.ParseReport(string(data))
	if !ok {
		return "none\n"
	}
	out, _ := json.Marshal(r)
	return string(out) + "\n"
}

func TestReportGolden(t *testing.T) { golden(t, "reports", "txt", reportResult) }

func coordinatorResult(_ string, data []byte) string {
	tasks, err := supervisor.ParseCoordinatorPlan("j1", string(data))
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, t := range tasks {
		fmt.Fprintf(&b, "%s/%s %s deps=%v\n", t.JobID, t.ID, t.Kind, t.DependsOn)
	}
	return b.String()
}

func TestCoordinatorPlanGolden(t *testing.T) { golden(t, "coordinator", "txt", coordinatorResult) }

func acceptanceResult(_ string, data []byte) string {
	var b strings.Builder
	for _, a := range supervisor.ParseAcceptance(string(data)) {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	if b.Len() == 0 {
		return "none\n"
	}
	return b.String()
}

func TestAcceptanceGolden(t *testing.T) { golden(t, "requests", "md", acceptanceResult) }

func seedDir(f *testing.F, dir, ext string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*."+ext))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(string(data))
	}
}

func FuzzParseReport(f *testing.F) {
	seedDir(f, "reports", "txt")
	f.Fuzz(func(t *testing.T, text string) {
		r, ok := supervisor.ParseReport(text)
		if !ok {
			return
		}
		if r.Status == "" && r.Verdict == "" {
			t.Fatalf("a report without status or verdict: %+v", r)
		}
		// A report found once is found again after more text above it.
		if r2, ok := supervisor.ParseReport("preamble\n" + text); !ok || r2.Status != r.Status || r2.Verdict != r.Verdict {
			t.Fatalf("report depends on the text above it: %+v %+v", r, r2)
		}
	})
}

func FuzzExtractYAML(f *testing.F) {
	seedDir(f, "coordinator", "txt")
	f.Fuzz(func(t *testing.T, text string) {
		block, err := supervisor.ExtractYAML(text)
		if err != nil {
			return
		}
		if !strings.Contains(text, strings.TrimRight(block, "\n")) {
			t.Fatalf("the block %q is not in the text", block)
		}
		_, _ = supervisor.ParseCoordinatorPlan("j1", text)
	})
}

func FuzzParseAcceptance(f *testing.F) {
	seedDir(f, "requests", "md")
	f.Fuzz(func(t *testing.T, text string) {
		for _, a := range supervisor.ParseAcceptance(text) {
			if !strings.Contains(text, a) {
				t.Fatalf("criterion %q is not in the request", a)
			}
		}
	})
}
