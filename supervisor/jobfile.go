package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/atomicfile"
)

var jobNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidateJobName checks a job's name, which also names its branches.
func ValidateJobName(name string) error {
	if !jobNameRE.MatchString(name) {
		return fmt.Errorf("%q is not a usable job name: use 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

// JobFile is the content of .ai/jobs/<name>.json: what the owner asked for,
// every correction since, the acceptance criteria and the owner's decisions.
type JobFile struct {
	Name       string     `json:"name"`
	Revisions  []Revision `json:"revisions"`
	Acceptance []string   `json:"acceptance,omitempty"`
	Decisions  []Decision `json:"decisions,omitempty"`
}

// Revision is the request (revision 1) or one correction of it.
type Revision struct {
	Revision int       `json:"revision"`
	Request  string    `json:"request"`
	At       time.Time `json:"at"`
}

// Decision is a product decision of the owner's for the job, such as the
// words of a plan reply.
type Decision struct {
	At    time.Time `json:"at"`
	Who   string    `json:"who,omitempty"`
	Words string    `json:"words"`
}

// Revision returns the newest revision number.
func (f *JobFile) Revision() int {
	if len(f.Revisions) == 0 {
		return 0
	}
	return f.Revisions[len(f.Revisions)-1].Revision
}

// JobPath is where a job's file lives.
func JobPath(root, name string) string { return filepath.Join(root, ".ai", "jobs", name+".json") }

// LoadJobFile reads a job's file.
func LoadJobFile(root, name string) (*JobFile, error) {
	path := JobPath(root, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no job %q in this repository (%s is missing): create it with agentkit job create %s --request-file FILE", name, path, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var f JobFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s is not a job file: %w (fix the JSON, or restore it from Git)", path, err)
	}
	if f.Name != name || len(f.Revisions) == 0 {
		return nil, fmt.Errorf("%s is not a job file for %q: it needs \"name\": %q and at least one revision", path, name, name)
	}
	return &f, nil
}

// writeJobFile writes the job's file atomically, creating .ai/jobs/.
func writeJobFile(root string, f *JobFile) error {
	path := JobPath(root, f.Name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// ParseAcceptance finds the acceptance criteria in a request: the bullet
// lines under a line or heading that reads "Acceptance" or "Acceptance criteria".
func ParseAcceptance(request string) []string {
	var out []string
	in := false
	for _, raw := range strings.Split(request, "\n") {
		line := strings.TrimSpace(raw)
		head := strings.ToLower(strings.TrimRight(strings.TrimLeft(line, "#* "), ":* "))
		if head == "acceptance" || head == "acceptance criteria" {
			in = true
			continue
		}
		if !in {
			continue
		}
		if line == "" {
			if len(out) > 0 {
				in = false
			}
			continue
		}
		item, ok := bullet(line)
		if !ok {
			in = false
			continue
		}
		out = append(out, item)
	}
	return out
}

// bullet returns the text of a list item: "- x", "* x", "1. x", "1) x".
func bullet(line string) (string, bool) {
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(line, p) {
			return strings.TrimSpace(line[len(p):]), true
		}
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
		return strings.TrimSpace(line[i+2:]), true
	}
	return "", false
}
