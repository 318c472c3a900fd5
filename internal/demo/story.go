package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/supervisor"
)

// step starts a numbered step of the story.
func (r *runner) step(n int, title string) { fmt.Fprintf(r.out, "\n%d. %s\n", n, title) }

// say prints one indented line of the current step.
func (r *runner) say(format string, args ...any) {
	fmt.Fprintf(r.out, "   "+format+"\n", args...)
}

// quote prints lines as a mail app shows them.
func (r *runner) quote(lines []string) {
	for _, l := range lines {
		fmt.Fprintf(r.out, "   | %s\n", l)
	}
}

// taskLine says in one line (wrapped) what happened to a task.
func (r *runner) taskLine(task string, events []supervisor.Event) {
	var parts []string
	for _, e := range events {
		switch e.Kind {
		case "built":
			f := strings.Fields(e.Message)
			parts = append(parts, "built "+f[len(f)-1])
		case "checked":
			parts = append(parts, "gate passed")
		case "retry":
			what, _, _ := strings.Cut(e.Message, ":")
			parts = append(parts, what, "one more try")
		case "problem":
			// "stopped: problem CODE (kind): what failed: ..."
			f := strings.SplitN(e.Message, ":", 4)
			if len(f) >= 3 {
				parts = append(parts, strings.TrimSpace(f[2]), strings.TrimSpace(f[0]+":"+f[1]))
			} else {
				parts = append(parts, e.Message)
			}
		case "merged":
			parts = append(parts, "merged")
		}
	}
	lines := wrap(parts, 66, ", ")
	for i, l := range lines {
		name := ""
		if i == 0 {
			name = task
		}
		r.say("  %-8s %s", name, l)
	}
}

// checks prints the mailbot's checks (only those with result only, when set)
// as a table, wrapping the reasons.
func (r *runner) checks(list []mailbot.Check, only string) {
	for _, c := range list {
		if c.Result == mailbot.ResultSkip || (only != "" && c.Result != only) {
			continue
		}
		lines := wrap(strings.Fields(c.Reason), 52, " ")
		for i, l := range lines {
			if i == 0 {
				r.say("  %-11s %-4s  %s", c.Name, c.Result, l)
			} else {
				r.say("  %-11s %-4s  %s", "", "", l)
			}
		}
	}
}

// summary reads back what happened from the store and the mail server.
func (r *runner) summary(ctx context.Context, code problems.Code) (Result, error) {
	res := Result{Code: code}
	for _, d := range r.mail.Received() {
		kind, _, err := r.outboxKind(ctx, d)
		if err != nil {
			return res, err
		}
		switch kind {
		case problems.OutboxProblem:
			res.ProblemEmails++
		case problems.OutboxConfirmation:
			res.Confirmations++
		case problems.OutboxJobDone:
			res.JobDoneEmails++
		case problems.OutboxAnswer:
			res.Answers++
		}
	}
	list, err := mailbot.RecentVerdicts(ctx, r.db, 100)
	if err != nil {
		return res, err
	}
	for _, e := range list {
		switch e.Outcome {
		case "obeyed":
			res.Obeyed++
		case "refused":
			res.Refused++
		}
	}
	js, err := r.job(ctx)
	if err != nil {
		return res, err
	}
	res.JobState, res.Branch, res.Head, res.Tasks = js.State, js.Branch, js.Head, len(js.Tasks)
	for _, t := range js.Tasks {
		if t.State == string(supervisor.Merged) {
			res.Merged++
		}
	}
	fmt.Fprintf(r.out, "\nIn short, as the state store and the mail server have it:\n")
	r.say("problem emails sent: %d (%s)", res.ProblemEmails, code)
	r.say("replies obeyed: %d; forged replies refused: %d; answers sent: %d", res.Obeyed, res.Refused, res.Answers)
	r.say("tasks merged: %d of %d", res.Merged, res.Tasks)
	r.say("confirmations sent: %d", res.Confirmations)
	r.say("job %s: %s, %s at %s", jobName, res.JobState, res.Branch, short(res.Head))
	return res, nil
}

// printKept says where the kept files are and how to look at them.
func (r *runner) printKept() {
	fmt.Fprintf(r.out, "Kept for a look in %s:\n", r.dir)
	r.say("%-15s the repository: git -C %s log --graph --oneline agentkit/integration", filepath.Base(r.repoDir)+"/", r.repoDir)
	r.say("%-15s the agentkit home (state.db, phone.yaml); try:", filepath.Base(r.home)+"/")
	r.say("%-15s AGENTKIT_HOME=%s agentkit phone log", "", r.home)
	r.say("%-15s AGENTKIT_HOME=%s agentkit problem list --all", "", r.home)
	r.say("%-15s AGENTKIT_HOME=%s agentkit events --repo %s", "", r.home, repoName)
	r.say("%-15s every email the owner's phone got, as .eml files", "mail/phone/")
	r.say("%-15s the replies delivered to the bot's mailbox", "mail/bot-inbox/")
	r.say("%-15s the owner's dictionary", "owner/")
	r.say("%-15s what the supervisor and the mailbot logged", "demo.log")
}

// lineWith returns the first line of s that contains sub, trimmed.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// wrap joins parts with sep into lines of at most width characters (a
// longer part gets a line of its own); sep's trailing space goes at the
// line break.
func wrap(parts []string, width int, sep string) []string {
	var lines []string
	cur := ""
	mark := strings.TrimRight(sep, " ")
	for i, p := range parts {
		if i < len(parts)-1 {
			p += mark
		}
		switch {
		case cur == "":
			cur = p
		case len(cur)+1+len(p) > width:
			lines = append(lines, cur)
			cur = p
		default:
			cur += " " + p
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// rel is path relative to base, or path itself.
func rel(base, path string) string {
	if r, err := filepath.Rel(base, path); err == nil {
		return r
	}
	return path
}
