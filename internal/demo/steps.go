package demo

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/internal/status"
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

func (r *runner) stepRepository() {
	r.step(1, "A repository and a job of three tasks")
	r.say("%s/ is a new Git repository. Job %q asks for the bakery's", filepath.Base(r.repoDir), jobName)
	r.say("website, one task per page (.ai/tasks.yaml):")
	for _, p := range pages {
		after := ""
		if p.DependsOn != "" {
			after = " (after " + p.DependsOn + ")"
		}
		r.say("  %-8s %s%s", p.Task, p.Title, after)
	}
	r.say("Each task's gate spell-checks the pages against the owner's dictionary,")
	r.say("%s, outside the repository. It lacks the word %q.", rel(r.dir, r.dict), unknownWord)
}

// stepStopped waits until the problem email is out and the other tasks are
// merged, and tells how each task went.
func (r *runner) stepStopped(ctx context.Context) (problems.Code, delivered, error) {
	var code problems.Code
	var msg delivered
	err := r.waitFor(ctx, "the problem email and the other tasks merged", func() (bool, error) {
		found := false
		for _, d := range r.mail.Received() {
			kind, c, err := r.outboxKind(ctx, d)
			if err != nil {
				return false, err
			}
			if kind == problems.OutboxProblem {
				code, msg, found = c, d, true
				break
			}
		}
		if !found {
			return false, nil
		}
		tasks, err := r.taskStates(ctx)
		if err != nil {
			return false, err
		}
		for _, p := range pages {
			if p.Task != stoppedTask && tasks[p.Task] != string(supervisor.Merged) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return "", delivered{}, err
	}
	r.step(2, "The supervisor runs the job; one task stops")
	r.say("The command runtime runs scripts/builder.sh in each task's own work tree.")
	for _, p := range pages {
		r.taskLine(p.Task, r.eventsOf(p.Task, 0))
	}
	p, err := r.store.Get(ctx, code)
	if err != nil {
		return "", delivered{}, err
	}
	if l := lineWith(p.LogTail, "is not in the dictionary"); l != "" {
		r.say("The gate said: %s", l)
	}
	r.say("That is problem %s (%s); the other tasks went on without waiting.", code, p.Kind)
	return code, msg, nil
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

// stepProblemEmail shows the problem email as the owner's phone shows it,
// and returns its retry link.
func (r *runner) stepProblemEmail(d delivered) (string, error) {
	e, err := readEmail(d.Data)
	if err != nil {
		return "", err
	}
	r.step(3, "The owner's phone gets one email")
	r.say("From:    %s", e.From)
	r.say("Subject: %s", e.Subject)
	r.quote(e.Text("Reply with one of:"))
	opts := e.Options()
	r.say("Replies, one tap each:")
	link := ""
	for _, o := range opts {
		r.say("  %-13s %s", o.Reply, o.Meaning)
		if o.Reply == "retry" {
			link = o.Link
		}
	}
	if link == "" {
		return "", errors.New("the problem email offers no retry link; this is a bug in agentkit, please report it")
	}
	r.say("The retry link: %s", link)
	return link, nil
}

// stepForgery has someone else reply first, from the owner's address but
// without the owner's provider's signature.
func (r *runner) stepForgery(ctx context.Context, problemMail delivered, code problems.Code) error {
	e, err := readEmail(problemMail.Data)
	if err != nil {
		return err
	}
	raw, err := r.owner.Compose(reply{To: botAddress, Subject: "Re: " + e.Subject, Body: "skip\n"}, time.Now(), false)
	if err != nil {
		return err
	}
	if err := r.mail.Deliver(raw, "forged-skip", "mail.stranger.example", "dkim=none; spf=fail smtp.mailfrom=owner.example"); err != nil {
		return err
	}
	var entry mailbot.LogEntry
	err = r.waitFor(ctx, "the mailbot's verdict on the forged reply", func() (bool, error) {
		list, err := mailbot.RecentVerdicts(ctx, r.db, 10)
		if err != nil || len(list) == 0 {
			return false, err
		}
		entry = list[len(list)-1]
		return true, nil
	})
	if err != nil {
		return err
	}
	p, err := r.store.Get(ctx, code)
	if err != nil {
		return err
	}
	r.step(4, "Someone else replies first")
	r.say("A stranger's server sends \"skip\", forged to read From: %s.", r.owner.Address)
	r.say("The bot's provider (%s) takes it in and stamps it: no DKIM", providerHost)
	r.say("signature, spf=fail.")
	var v mailbot.Verdict
	if err := json.Unmarshal(entry.Verdict, &v); err != nil {
		return fmt.Errorf("reading the mailbot's verdict: %w", err)
	}
	r.say("The mailbot %s it:", entry.Outcome)
	r.checks(v.Checks, mailbot.ResultFail)
	r.say("Problem %s is still %s, and no answer went out: answering", code, p.State)
	r.say("unauthenticated mail would let anyone make the bot send mail.")
	return nil
}

// stepOwnerReplies has the owner fix the cause and tap the retry link.
func (r *runner) stepOwnerReplies(link string) error {
	f, err := os.OpenFile(r.dict, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString(unknownWord + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("adding %q to the owner's dictionary: %w", unknownWord, err)
	}
	rep, err := tap(link)
	if err != nil {
		return err
	}
	raw, err := r.owner.Compose(rep, time.Now(), true)
	if err != nil {
		return err
	}
	if err := r.mail.Deliver(raw, "owner-retry", "mail."+r.owner.Domain,
		fmt.Sprintf("dkim=pass header.d=%s header.s=%s; spf=pass smtp.mailfrom=%s", r.owner.Domain, r.owner.Selector, r.owner.Domain)); err != nil {
		return err
	}
	r.step(5, "The owner fixes the cause and taps \"retry\"")
	r.say("The owner adds %q to %s, then taps the retry link.", unknownWord, rel(r.dir, r.dict))
	r.say("The phone sends to %s:", rep.To)
	r.say("  Subject: %s", rep.Subject)
	r.say("  Text:    %s", strings.ReplaceAll(strings.TrimSpace(rep.Body), "\n\n", " / "))
	r.say("The owner's provider signs it with DKIM (d=%s) with a key made for", r.owner.Domain)
	r.say("this run, which the demo's DNS publishes at %s.", r.owner.RecordName())
	return nil
}

// stepObeyed shows the mailbot's checks of the reply and the task going on.
func (r *runner) stepObeyed(ctx context.Context, code problems.Code) error {
	from := r.eventCount()
	var outcome string
	err := r.waitFor(ctx, "the reply obeyed and task "+stoppedTask+" merged", func() (bool, error) {
		p, err := r.store.Get(ctx, code)
		if err != nil || p.Decision == nil || !p.Decision.Applied() {
			return false, err
		}
		outcome = p.Decision.Outcome
		tasks, err := r.taskStates(ctx)
		return tasks[stoppedTask] == string(supervisor.Merged), err
	})
	if err != nil {
		return err
	}
	list, err := mailbot.RecentVerdicts(ctx, r.db, 10)
	if err != nil {
		return err
	}
	var v mailbot.Verdict
	for _, e := range list {
		if e.Outcome == "obeyed" {
			if err := json.Unmarshal(e.Verdict, &v); err != nil {
				return fmt.Errorf("reading the mailbot's verdict: %w", err)
			}
			break
		}
	}
	if v.Auth == nil || v.Auth.Path != "dkim" {
		return errors.New("the owner's reply passed by its provider's stamp, not by the bot's own DKIM check, which the demo is there to show; this is a bug, please report it")
	}
	r.step(6, "agentkit checks the reply and obeys it")
	r.checks(v.Checks, "")
	r.say("Decision on %s: retry, from the owner by email: %s.", code, outcome)
	r.taskLine(stoppedTask, r.eventsOf(stoppedTask, from))
	return nil
}

// stepConfirmation shows the email that confirms the decision.
func (r *runner) stepConfirmation(ctx context.Context, code problems.Code) error {
	d, err := r.waitMail(ctx, "the confirmation email", problems.OutboxConfirmation)
	if err != nil {
		return err
	}
	e, err := readEmail(d.Data)
	if err != nil {
		return err
	}
	r.step(7, "The phone gets the confirmation")
	r.say("Subject: %s", e.Subject)
	r.quote(e.Text("The problem was:"))
	return nil
}

// stepDone waits for the job's end and shows the integration branch and
// the job-done email.
func (r *runner) stepDone(ctx context.Context) error {
	err := r.waitFor(ctx, "the job done", func() (bool, error) {
		select {
		case <-r.supDone:
			return true, r.supErr
		default:
			return false, nil
		}
	})
	if err != nil {
		return err
	}
	d, err := r.waitMail(ctx, "the job-done email", problems.OutboxJobDone)
	if err != nil {
		return err
	}
	e, err := readEmail(d.Data)
	if err != nil {
		return err
	}
	js, err := r.job(ctx)
	if err != nil {
		return err
	}
	r.step(8, "The job is done")
	r.say("The phone's last email:")
	r.say("Subject: %s", e.Subject)
	r.quote(e.Text(""))
	r.say("Job %s is %s; %s is at %s.", js.Name, js.State, js.Branch, short(js.Head))
	if text, err := git.Run(ctx, r.repoDir, "show", js.Branch+":"+pageFile(stoppedTask)); err == nil {
		r.say("There, %s reads:", pageFile(stoppedTask))
		r.quote(strings.Split(text, "\n"))
	}
	if mainHead, err := git.Run(ctx, r.repoDir, "rev-parse", "--short", "main"); err == nil {
		r.say("main is untouched, still at %s (the first commit). To take the work:", mainHead)
		r.say("  git merge %s", js.Branch)
	}
	return nil
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

// waitMail waits for an email of the given kind and returns it.
func (r *runner) waitMail(ctx context.Context, what string, kind problems.OutboxKind) (delivered, error) {
	var found delivered
	err := r.waitFor(ctx, what, func() (bool, error) {
		for _, d := range r.mail.Received() {
			k, _, err := r.outboxKind(ctx, d)
			if err != nil {
				return false, err
			}
			if k == kind {
				found = d
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

// outboxKind says what the outbox owed that an accepted email delivers, by
// its Message-ID, and the code of its problem when it has one.
func (r *runner) outboxKind(ctx context.Context, d delivered) (problems.OutboxKind, problems.Code, error) {
	e, err := readHeader(d.Data)
	if err != nil {
		return "", "", err
	}
	id, err := e.MessageID()
	if err != nil || id == "" {
		return "", "", fmt.Errorf("an email the bot sent has no Message-ID: %v", err)
	}
	var kind, code string
	err = r.db.QueryRowContext(ctx, `SELECT o.kind, coalesce(p.code, '') FROM outbox o LEFT JOIN problems p ON p.id = o.problem_id
		WHERE o.message_id = ?`, id).Scan(&kind, &code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("the bot sent an email (%s) that its outbox does not know", id)
	}
	if err != nil {
		return "", "", fmt.Errorf("reading the outbox: %w", err)
	}
	return problems.OutboxKind(kind), problems.Code(code), nil
}

// readHeader reads the header of a raw message.
func readHeader(raw []byte) (mail.Header, error) {
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return mail.Header{}, fmt.Errorf("reading an email the bot sent: %w", err)
	}
	return mail.Header{Header: ent.Header}, nil
}

// taskStates returns the job's task states by name.
func (r *runner) taskStates(ctx context.Context) (map[string]string, error) {
	js, err := r.job(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range js.Tasks {
		out[t.Name] = t.State
	}
	return out, nil
}

// job returns the demo job's status.
func (r *runner) job(ctx context.Context) (status.JobStatus, error) {
	list, err := status.Jobs(ctx, r.db, r.repo.Name, r.repo.Path, jobName)
	if err != nil {
		return status.JobStatus{}, err
	}
	if len(list) != 1 {
		return status.JobStatus{}, fmt.Errorf("job %s is not in the state store", jobName)
	}
	return list[0], nil
}

func pageFile(task string) string {
	for _, p := range pages {
		if p.Task == task {
			return p.File
		}
	}
	return ""
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
