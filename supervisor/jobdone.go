package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/internal/git"
)

// jobDonePayload is the outbox payload of a job-done email. Its repo, job,
// summary and detail fields are what the mailbot renders (mailbot.JobDone);
// the rest are for programs reading the outbox.
type jobDonePayload struct {
	Repo      string `json:"repo"`
	Job       string `json:"job"`
	Summary   string `json:"summary"`
	Detail    string `json:"detail"`
	Branch    string `json:"branch"`
	Head      string `json:"head"`
	Merged    int    `json:"merged"`
	Skipped   int    `json:"skipped"`
	Cancelled int    `json:"cancelled"`
}

// jobDoneMail says what a finished job merged, where the integration branch
// is, and how the owner takes it into their main branch. The caller holds s.mu.
func (s *Supervisor) jobDoneMail(ctx context.Context, j *job, branch, head string) string {
	p := jobDonePayload{Repo: s.repo.Name, Job: j.name, Branch: branch, Head: head}
	var merged, other []string
	for _, t := range j.tasks {
		switch t.state {
		case Merged:
			p.Merged++
			merged = append(merged, fmt.Sprintf("    %s: %s", t.name, titleOr(t.spec)))
		case Skipped:
			p.Skipped++
			other = append(other, fmt.Sprintf("    %s: skipped", t.name))
		case Cancelled:
			p.Cancelled++
			other = append(other, fmt.Sprintf("    %s: cancelled", t.name))
		}
	}
	p.Summary = fmt.Sprintf("%d merged, %d skipped, %d cancelled; %s is at %s", p.Merged, p.Skipped, p.Cancelled, branch, short(head))
	main := mainBranch(ctx, s.root)
	var b strings.Builder
	if len(merged) > 0 {
		fmt.Fprintf(&b, "Merged into %s:\n%s\n\n", branch, strings.Join(merged, "\n"))
	} else {
		fmt.Fprintf(&b, "Nothing was merged into %s.\n\n", branch)
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, "Not merged:\n%s\n\n", strings.Join(other, "\n"))
	}
	fmt.Fprintf(&b, "%s is at commit\n    %s\n\n", branch, head)
	fmt.Fprintf(&b, "To see it and take it into %s, at the machine:\n", main)
	fmt.Fprintf(&b, "    cd %s\n", s.root)
	fmt.Fprintf(&b, "    git log --oneline %s..%s\n", main, branch)
	fmt.Fprintf(&b, "    git switch %s\n", main)
	fmt.Fprintf(&b, "    git merge %s\n", branch)
	p.Detail = b.String()
	data, _ := json.Marshal(p)
	return string(data)
}

// mainBranch names the owner's main branch: main or master when one exists,
// else the branch their checkout is on.
func mainBranch(ctx context.Context, root string) string {
	for _, b := range []string{"main", "master"} {
		if git.BranchExists(ctx, root, b) {
			return b
		}
	}
	if b := git.CurrentBranch(ctx, root); b != "" {
		return b
	}
	return "main"
}
