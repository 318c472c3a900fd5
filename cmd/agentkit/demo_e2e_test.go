//go:build !windows

package main_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/state"
)

// demoEnv is a fresh machine for the demo: a home folder, a temporary
// folder, an agentkit home the demo must not touch, and a Git without any
// global configuration (no author).
type demoEnv struct {
	t                 *testing.T
	home, tmp, akHome string
	vars              []string
}

func newDemoEnv(t *testing.T) *demoEnv {
	t.Helper()
	dir := t.TempDir()
	d := &demoEnv{t: t, home: filepath.Join(dir, "home"), tmp: filepath.Join(dir, "tmp"), akHome: filepath.Join(dir, "home", ".agentkit")}
	for _, p := range []string{d.home, d.tmp} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	emptyGit := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(emptyGit, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.vars = []string{
		"HOME=" + d.home,
		"TMPDIR=" + d.tmp,
		"AGENTKIT_HOME=" + d.akHome,
		"GIT_CONFIG_GLOBAL=" + emptyGit,
		"GIT_CONFIG_NOSYSTEM=1",
		"PATH=" + os.Getenv("PATH"),
	}
	return d
}

// run runs the built binary's demo and returns its output; it fails the
// test unless the demo exits 0.
func (d *demoEnv) run(args ...string) string {
	d.t.Helper()
	cmd := exec.Command(binary, append([]string{"demo"}, args...)...)
	cmd.Dir = d.home
	cmd.Env = d.vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.t.Fatalf("agentkit demo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// storyFacts checks the facts the story reports and returns the problem's code.
func storyFacts(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`problem emails sent: 1 \(([B-Z]{6})\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the story does not say one problem email was sent:\n%s", out)
	}
	code := m[1]
	for _, want := range []string{
		"Subject: [agentkit] " + code + " bakery: gate fast failed",
		"about.txt: \"agentkit\" is not in the dictionary",
		"retry         run the stopped step again",
		"The retry link: mailto:agentkit@bot.example?subject=Re%3A%20%5Bagentkit%5D%20" + code,
		"dkim        fail  the message has no DKIM signature",
		"dkim        pass  DKIM signature by owner.example (selector phone)",
		"code        pass  code " + code + " from the subject",
		"Decision on " + code + ": retry, from the owner by email",
		"| Done: problem " + code + " in bakery.",
		"| This site was made with agentkit.",
		"replies obeyed: 1; forged replies refused: 1; answers sent: 0",
		"tasks merged: 3 of 3",
		"confirmations sent: 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the story lacks %q", want)
		}
	}
	// The problem email is shown once; the confirmation answers it.
	if n := strings.Count(out, "Subject: [agentkit] "+code); n != 1 {
		t.Errorf("the problem email appears %d times in the story, want 1", n)
	}
	if !regexp.MustCompile(`job pages: done, agentkit/integration at [0-9a-f]{7}`).MatchString(out) {
		t.Errorf("the story does not end with the job done")
	}
	// The story's steps come in order.
	last := -1
	for _, step := range []string{"\n1. ", "\n2. ", "\n3. ", "\n4. ", "\n5. ", "\n6. ", "\n7. ", "\n8. ", "\nIn short"} {
		i := strings.Index(out, step)
		if i <= last {
			t.Errorf("step %q is missing or out of order", strings.TrimSpace(step))
		}
		last = i
	}
	if t.Failed() {
		t.Logf("story:\n%s", out)
	}
	return code
}

func TestDemoLeavesNothingBehind(t *testing.T) {
	d := newDemoEnv(t)
	out := d.run()
	storyFacts(t, out)
	if !strings.Contains(out, "Removed "+d.tmp) {
		t.Errorf("the story does not say the demo's folder was removed:\n%s", out)
	}
	if left, _ := os.ReadDir(d.tmp); len(left) != 0 {
		t.Errorf("the demo left %d entries in the temporary folder, like %s", len(left), left[0].Name())
	}
	if _, err := os.Stat(d.akHome); !os.IsNotExist(err) {
		t.Errorf("the demo touched AGENTKIT_HOME %s (%v)", d.akHome, err)
	}
	if left, _ := os.ReadDir(d.home); len(left) != 0 {
		t.Errorf("the demo wrote into the home folder: %s", left[0].Name())
	}
}

func TestDemoCleansUpWhenItsReaderGoesAway(t *testing.T) {
	d := newDemoEnv(t)
	cmd := exec.Command(binary, "demo")
	cmd.Dir = d.home
	cmd.Env = d.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read the first line, then go away, as "agentkit demo | head -1" does.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "agentkit demo") {
		t.Fatalf("first line %q, %v", line, err)
	}
	stdout.Close()
	_ = cmd.Wait() // its exit status is not the point; its folder is
	if left, _ := os.ReadDir(d.tmp); len(left) != 0 {
		t.Errorf("the demo left %s behind when its reader went away", left[0].Name())
	}
}

func TestDemoKeepLeavesItsFilesToInspect(t *testing.T) {
	d := newDemoEnv(t)
	out := d.run("--keep")
	code := storyFacts(t, out)
	m := regexp.MustCompile(`Kept for a look in (\S+):`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the story does not say where the files were kept:\n%s", out)
	}
	dir := m[1]
	if !strings.HasPrefix(dir, d.tmp) {
		t.Fatalf("kept in %s, outside the temporary folder %s", dir, d.tmp)
	}
	if _, err := os.Stat(d.akHome); !os.IsNotExist(err) {
		t.Errorf("the demo touched AGENTKIT_HOME %s (%v)", d.akHome, err)
	}

	// The kept store holds what the story told.
	db, err := state.Open(context.Background(), filepath.Join(dir, "agentkit-home", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		what  string
		query string
		want  int
	}{
		{"problem emails sent", "SELECT count(*) FROM outbox WHERE kind = 'problem' AND state = 'sent'", 1},
		{"confirmations sent", "SELECT count(*) FROM outbox WHERE kind = 'confirmation' AND state = 'sent'", 1},
		{"job-done emails sent", "SELECT count(*) FROM outbox WHERE kind = 'job_done' AND state = 'sent'", 1},
		{"answers owed", "SELECT count(*) FROM outbox WHERE kind = 'answer'", 0},
		{"mail not sent", "SELECT count(*) FROM outbox WHERE state <> 'sent'", 0},
		{"replies obeyed", "SELECT count(*) FROM inbound WHERE outcome = 'obeyed' AND code = '" + code + "'", 1},
		{"replies refused", "SELECT count(*) FROM inbound WHERE outcome = 'refused'", 1},
		{"decisions by email", "SELECT count(*) FROM decisions WHERE channel = 'email' AND applied_at <> ''", 1},
		{"problems", "SELECT count(*) FROM problems", 1},
		{"open problems", "SELECT count(*) FROM problems WHERE state = 'open'", 0},
		{"tasks merged", "SELECT count(*) FROM tasks WHERE state = 'merged'", 3},
		{"jobs done", "SELECT count(*) FROM jobs WHERE name = 'pages' AND state = 'done'", 1},
	} {
		if got := count(c.query); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}

	// The phone got three emails, the bot's mailbox two replies.
	for sub, want := range map[string]int{"mail/phone": 3, "mail/bot-inbox": 2} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil || len(entries) != want {
			t.Errorf("%s holds %d files (%v), want %d", sub, len(entries), err, want)
		}
	}

	// The integration branch has every page, the about page as retried;
	// main is the first commit alone.
	repo := filepath.Join(dir, "bakery-site")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = d.vars
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	if files := git("ls-tree", "--name-only", "agentkit/integration"); !strings.Contains(files, "about.txt") || !strings.Contains(files, "contact.txt") || !strings.Contains(files, "index.txt") {
		t.Errorf("the integration branch holds %q", files)
	}
	if about := git("show", "agentkit/integration:about.txt"); !strings.Contains(about, "made with agentkit") {
		t.Errorf("about.txt on the integration branch: %q", about)
	}
	if n := git("rev-list", "--count", "main"); n != "1" {
		t.Errorf("main has %s commits, want the first one alone", n)
	}
	if head := git("rev-parse", "--short", "agentkit/integration"); !strings.Contains(out, "agentkit/integration at "+head) {
		t.Errorf("the story's integration head is not the branch's %s", head)
	}
}
