package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Report is the last line of an agent's final text, when it is
// {"agentkit": {...}} (DESIGN.md, the builder protocol).
type Report struct {
	// Builders: done, setup_failed or needs_files, with a reason and paths.
	Status string   `json:"status,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Paths  []string `json:"paths,omitempty"`
	// Reviewers: pass or changes, with findings.
	Verdict  string   `json:"verdict,omitempty"`
	Findings []string `json:"findings,omitempty"`
}

// The builder statuses and reviewer verdicts of the protocol.
const (
	StatusDone        = "done"
	StatusSetupFailed = "setup_failed"
	StatusNeedsFiles  = "needs_files"
	VerdictPass       = "pass"
	VerdictChanges    = "changes"
)

// ParseReport reads the report line at the end of an agent's final text. It
// reports false when the last non-blank line is not such an object, or holds
// a status or verdict the protocol does not know.
func ParseReport(final string) (Report, bool) {
	line := lastNonBlank(final)
	line = strings.Trim(line, "` \t")
	if !strings.HasPrefix(line, "{") {
		return Report{}, false
	}
	var env struct {
		Agentkit *Report `json:"agentkit"`
	}
	if err := json.Unmarshal([]byte(line), &env); err != nil || env.Agentkit == nil {
		return Report{}, false
	}
	r := *env.Agentkit
	switch r.Status {
	case "", StatusDone, StatusSetupFailed, StatusNeedsFiles:
	default:
		return Report{}, false
	}
	switch r.Verdict {
	case "", VerdictPass, VerdictChanges:
	default:
		return Report{}, false
	}
	if r.Status == "" && r.Verdict == "" {
		return Report{}, false
	}
	return r, true
}

func lastNonBlank(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// ErrNoPlanBlock says the coordinator's final text held no fenced yaml block.
var ErrNoPlanBlock = errors.New("the coordinator's answer has no ```yaml block with the tasks")

// ExtractYAML returns the content of the last fenced ```yaml (or ```yml)
// block of text.
func ExtractYAML(text string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var blocks []string
	for i := 0; i < len(lines); i++ {
		open := strings.TrimSpace(lines[i])
		fence, info, ok := fenceOpen(open)
		if !ok {
			continue
		}
		lang := strings.ToLower(strings.Fields(info + " x")[0])
		var body []string
		closed := false
		j := i + 1
		for ; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); strings.HasPrefix(t, fence) && strings.Trim(t, string(fence[0])) == "" {
				closed = true
				break
			}
			body = append(body, lines[j])
		}
		if !closed {
			break
		}
		if lang == "yaml" || lang == "yml" {
			blocks = append(blocks, strings.Join(body, "\n")+"\n")
		}
		i = j
	}
	if len(blocks) == 0 {
		return "", ErrNoPlanBlock
	}
	return blocks[len(blocks)-1], nil
}

// fenceOpen recognises an opening code fence (``` or ~~~, three or more) and
// returns the fence and its info string.
func fenceOpen(line string) (fence, info string, ok bool) {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == ch {
			n++
		}
		if n >= 3 {
			return line[:n], strings.TrimSpace(line[n:]), true
		}
	}
	return "", "", false
}

// ParseCoordinatorPlan reads the tasks from the coordinator's final text: a
// fenced yaml block holding either `tasks: [...]` or a bare list of tasks.
// Tasks without a job_id get job's.
func ParseCoordinatorPlan(job, final string) ([]Task, error) {
	block, err := ExtractYAML(final)
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(block)
	if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
		block = "tasks:\n" + indentLines(block, "  ")
	}
	p, err := ParsePlan("the coordinator's plan", []byte(block))
	if err != nil {
		return nil, err
	}
	if len(p.Tasks) == 0 {
		return nil, errors.New("the coordinator's plan has no tasks")
	}
	for i := range p.Tasks {
		if p.Tasks[i].JobID == "" {
			p.Tasks[i].JobID = job
		}
		if p.Tasks[i].JobID != job {
			return nil, fmt.Errorf("the coordinator's plan: task %q: job_id: %q is not this job (%s)", p.Tasks[i].ID, p.Tasks[i].JobID, job)
		}
	}
	return p.Tasks, nil
}

func indentLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
