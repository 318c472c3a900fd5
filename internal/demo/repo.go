package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentkit/agentkit/internal/git"
)

// page is what the scripted builder writes for one task.
type page struct {
	Task, Title, File string
	DependsOn         string
	Text              string
	// Again is the page's text when the builder is called again in the
	// same session (after its gate failed); "" for pages that pass at once.
	Again string
}

// The demo's job: a small bakery's website, one page per task. The about
// page names agentkit, a word the owner's dictionary does not have yet.
const (
	repoName = "bakery"
	jobName  = "pages"
	// unknownWord is the word the owner's dictionary lacks at first.
	unknownWord = "agentkit"
	// stoppedTask is the task whose gate fails until the owner fixes the cause.
	stoppedTask = "about"
)

var pages = []page{
	{Task: "index", Title: "Write the home page", File: "index.txt",
		Text: "Welcome to the corner bakery.\nWe bake fresh bread every morning.\n"},
	{Task: "about", Title: "Write the about page", File: "about.txt",
		Text:  "We bake our bread by hand.\nThis site was built with agentkit.\n",
		Again: "We bake our bread by hand.\nThis site was made with agentkit.\n"},
	{Task: "contact", Title: "Write the contact page", File: "contact.txt", DependsOn: "index",
		Text: "Visit us or write to us.\nWe open every morning at seven.\n"},
}

const request = `Write the bakery's website: a home page, an about page and a contact page,
one plain text file each.

Acceptance:
- Every page passes the spell check.
`

// dictionary is the owner's word list: every word of the pages but one.
func dictionary() string {
	seen := map[string]bool{}
	for _, p := range pages {
		for _, w := range words(p.Text + p.Again) {
			if w != unknownWord {
				seen[w] = true
			}
		}
	}
	list := make([]string, 0, len(seen))
	for w := range seen {
		list = append(list, w)
	}
	sort.Strings(list)
	return strings.Join(list, "\n") + "\n"
}

// words splits text as the spell check does: runs of ASCII letters, lower-cased.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' })
}

// builderScript is the scripted builder that agentkit's command runtime runs
// in each task's own work tree, with the brief on standard input.
func builderScript() string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
# The demo's scripted builder: it stands in for a coding agent. agentkit's
# command runtime runs it in the task's own Git work tree, with the brief on
# standard input and the task's name in AGENTKIT_TASK; agentkit commits what
# it changes. Called again in the same session (after a failed gate, with the
# gate's output as the brief), it rewords its page.
cat >/dev/null
case "$AGENTKIT_TASK" in
`)
	for _, p := range pages {
		fmt.Fprintf(&b, "%s)\n", p.Task)
		if p.Again != "" {
			fmt.Fprintf(&b, "  if [ -e %s ]; then\n    cat >%s <<'EOF'\n%sEOF\n", p.File, p.File, p.Again)
			fmt.Fprintf(&b, "    echo 'The spell check does not know \"%s\". It is the name of the tool, spelled'\n", unknownWord)
			b.WriteString("    echo 'right, so I kept it and reworded the sentence around it.'\n")
			b.WriteString("    echo '{\"agentkit\": {\"status\": \"done\"}}'\n    exit 0\n  fi\n")
		}
		fmt.Fprintf(&b, "  cat >%s <<'EOF'\n%sEOF\n  ;;\n", p.File, p.Text)
	}
	b.WriteString(`*)
  echo "no page is scripted for task $AGENTKIT_TASK" >&2
  exit 1;;
esac
echo "wrote the $AGENTKIT_TASK page"
echo '{"agentkit": {"status": "done"}}'
`)
	return b.String()
}

// spellcheckScript is the gate: every word of every page must be in the
// owner's dictionary, a file outside the repository named by SPELL_DICTIONARY
// (like a spell checker's personal word list in a home folder).
const spellcheckScript = `#!/bin/sh
# The demo's gate: every word of every page must be in the owner's
# dictionary, named by SPELL_DICTIONARY.
LC_ALL=C
export LC_ALL
dict=${SPELL_DICTIONARY:?set SPELL_DICTIONARY to the word list}
status=0
for page in *.txt; do
  [ -e "$page" ] || continue
  for word in $(tr -cs 'A-Za-z' '\n' <"$page" | tr 'A-Z' 'a-z' | sort -u); do
    if ! grep -qx "$word" "$dict"; then
      echo "$page: \"$word\" is not in the dictionary"
      status=1
    fi
  done
done
if [ "$status" = 0 ]; then echo "spelling ok"; fi
exit "$status"
`

const projectYAML = `# The demo's settings: see docs/project.md.
workflow: {mode: feature, review: "off"}
gates:
  fast: ["sh scripts/spellcheck.sh"]
  full: ["sh scripts/spellcheck.sh"]
max_workers: 2
runtimes:
  default: command
  reviewer: command
  coordinator: command
  command: {argv: ["sh", "scripts/builder.sh"]}
  grace: 1s
  timeout: 1m
integration_branch: agentkit/integration
`

// tasksYAML is the job's task graph; the coordinator is not needed when
// tasks.yaml already holds the job's tasks.
func tasksYAML() string {
	var b strings.Builder
	b.WriteString("tasks:\n")
	for _, p := range pages {
		kind := "SAFE_PARALLEL"
		if p.DependsOn != "" {
			kind = "DEPENDENT"
		}
		fmt.Fprintf(&b, "  - id: %s\n    job_id: %s\n    title: %s\n    kind: %s\n    expected_paths: {write: [%s]}\n",
			p.Task, jobName, p.Title, kind, p.File)
		if p.DependsOn != "" {
			fmt.Fprintf(&b, "    depends_on: [%s]\n", p.DependsOn)
		}
		b.WriteString("    acceptance: [Every word passes the spell check.]\n")
	}
	return b.String()
}

// makeRepo creates the demo's Git repository at root with one commit
// holding the scripts and agentkit's settings. Its Git settings are its own:
// an author, no signing and no hooks, whatever the user's global
// configuration says, so the demo runs on a machine where Git was never set up.
func makeRepo(ctx context.Context, root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("making the demo repository: %w", err)
	}
	files := map[string]string{
		"README.md":             "# The corner bakery's website\n\nMade by `agentkit demo`: one plain text file per page.\n",
		"scripts/builder.sh":    builderScript(),
		"scripts/spellcheck.sh": spellcheckScript,
		".ai/project.yaml":      projectYAML,
		".ai/tasks.yaml":        tasksYAML(),
	}
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
	}
	steps := [][]string{
		{"init", "-q"},
		{"symbolic-ref", "HEAD", "refs/heads/main"},
		{"config", "user.name", "Demo Owner"},
		{"config", "user.email", "owner@owner.example"},
		{"config", "commit.gpgsign", "false"},
		{"config", "tag.gpgsign", "false"},
		{"config", "core.hooksPath", filepath.Join(root, ".git", "hooks")},
		{"add", "-A"},
		{"commit", "-q", "-m", "The bakery's website: scripts and agentkit settings"},
	}
	for _, args := range steps {
		if _, err := git.Run(ctx, root, args...); err != nil {
			return fmt.Errorf("making the demo repository: %w", err)
		}
	}
	return nil
}
