package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/git"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/supervisor"
)

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
	var v mailbot.Verdict
	err := r.waitFor(ctx, "the reply obeyed and task "+stoppedTask+" merged", func() (bool, error) {
		p, err := r.store.Get(ctx, code)
		if err != nil || p.Decision == nil || !p.Decision.Applied() {
			return false, err
		}
		outcome = p.Decision.Outcome
		list, err := mailbot.RecentVerdicts(ctx, r.db, 10)
		if err != nil {
			return false, err
		}
		obeyed := false
		for _, e := range list {
			if e.Outcome == "obeyed" && e.Code == code {
				if err := json.Unmarshal(e.Verdict, &v); err != nil {
					return false, fmt.Errorf("reading the mailbot's verdict: %w", err)
				}
				obeyed = true
				break
			}
		}
		tasks, err := r.taskStates(ctx)
		return obeyed && tasks[stoppedTask] == string(supervisor.Merged), err
	})
	if err != nil {
		return err
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
func (r *runner) stepConfirmation(ctx context.Context) error {
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
		r.say("main is untouched, still at %s (the first commit): the work waits on", mainHead)
		r.say("%s for the owner to merge.", js.Branch)
	}
	return nil
}
