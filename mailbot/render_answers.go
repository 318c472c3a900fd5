package mailbot

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
)

// confirmationBody says what was done about an obeyed reply.
func confirmationBody(p *problems.Problem, d *problems.Decision, owners []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Done: problem %s in %s.\n\n", p.Code, p.Repo)
	fmt.Fprintf(&b, "Reply: %s\n", cutRunes(problems.Reply{Verb: d.Reply, Words: d.Words}.String(), 400))
	fmt.Fprintf(&b, "From: %s (%s), %s\n", d.Who, d.Channel, d.At.UTC().Format("2006-01-02 15:04 UTC"))
	if o := strings.TrimSpace(d.Outcome); o != "" {
		b.WriteString("\n")
		b.WriteString(wrapText(RedactLog(o), wrapWidth))
		b.WriteString("\n")
	}
	b.WriteString("\nThe problem was:\n")
	b.WriteString(wrapText(oneLine(p.Summary), wrapWidth))
	b.WriteString("\n\n")
	b.WriteString(obeyedFooter(owners))
	return b.String()
}

// answerKind names what an automatic answer says.
type answerKind string

// The answers the bot owes an authenticated owner.
const (
	answerRefused answerKind = "refused"
	answerStatus  answerKind = "status"
	answerHelp    answerKind = "help"
	answerPaused  answerKind = "paused"
	answerResumed answerKind = "resumed"
)

// answerPayload is the payload of an outbox row of kind answer: what the bot
// owes an authenticated owner's message. It is rendered when it is sent, so a
// status answer shows the state at that moment.
type answerPayload struct {
	Kind answerKind `json:"kind"`
	// To is the owner address the message came from; it is sent there only
	// while it is still a configured owner.
	To         string   `json:"to"`
	Subject    string   `json:"subject,omitempty"`
	InReplyTo  string   `json:"in_reply_to,omitempty"`
	References []string `json:"references,omitempty"`
	// Why says what was refused; Fix says what would work.
	Why  string `json:"why,omitempty"`
	Fix  string `json:"fix,omitempty"`
	Repo string `json:"repo,omitempty"`
}

func (a answerPayload) encode() string {
	b, _ := json.Marshal(a) // plain strings: cannot fail
	return string(b)
}

func decodeAnswer(s string) (answerPayload, error) {
	var a answerPayload
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return a, fmt.Errorf("reading an owed answer: %w", err)
	}
	return a, nil
}

// threadOf returns the In-Reply-To and References of an answer to the message.
func (a answerPayload) thread() (inReplyTo, refs []string) {
	refs = append(refs, a.References...)
	if a.InReplyTo != "" {
		inReplyTo = []string{a.InReplyTo}
		refs = append(refs, a.InReplyTo)
	}
	// References grow with a thread; the last few are all a client needs.
	if len(refs) > 10 {
		refs = refs[len(refs)-10:]
	}
	return inReplyTo, refs
}

// refusedBody explains why an authenticated message did nothing and what would.
func refusedBody(a answerPayload, help string) string {
	var b strings.Builder
	b.WriteString("Nothing was done.\n\n")
	b.WriteString(wrapText(a.Why, wrapWidth))
	b.WriteString("\n")
	if a.Fix != "" {
		b.WriteString("\n")
		b.WriteString(wrapText(a.Fix, wrapWidth))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(help)
	return b.String()
}

// pauseBody confirms a pause or resume.
func pauseBody(a answerPayload) string {
	what := "every repository"
	if a.Repo != "" {
		what = a.Repo
	}
	if a.Kind == answerPaused {
		return fmt.Sprintf("Paused %s: no new task starts until you reply \"resume%s\".\nRunning tasks finish their current step.\n", what, spaceBefore(a.Repo))
	}
	return fmt.Sprintf("Resumed %s.\n", what)
}

func spaceBefore(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// helpText lists what the bot understands.
func helpText(owners []string, perHour int) string {
	var b strings.Builder
	b.WriteString(wrapText("To answer a problem, reply to its email with one of the words it lists (retry, accept, skip, dismiss, hint <words>, plan <words>); the problem's six-letter code comes from the thread, or write it: \"BCDFGH retry\".", wrapWidth))
	b.WriteString("\n\n")
	b.WriteString("Without a code:\n")
	b.WriteString("  status          what is open and what is paused\n")
	b.WriteString("  pause [repo]    start no new tasks (all repositories, or one)\n")
	b.WriteString("  resume [repo]   start tasks again\n")
	b.WriteString("  help            this text\n\n")
	b.WriteString(wrapText(fmt.Sprintf("Automatic answers like this one are limited to %d an hour.", perHour), wrapWidth))
	b.WriteString("\n\n")
	b.WriteString(obeyedFooter(owners))
	return b.String()
}

// statusBody renders the store's read model for a phone.
func statusBody(st status.Status, open []*problems.Problem, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agentkit status at %s\n\n", now.UTC().Format("2006-01-02 15:04 UTC"))
	if st.PausedAll {
		fmt.Fprintf(&b, "Every repository is paused, by %s.\n\n", st.PausedBy)
	}
	if len(st.Repos) == 0 {
		b.WriteString("No repositories are registered.\n")
	}
	for _, r := range st.Repos {
		line := fmt.Sprintf("%s: %s", r.Name, countText(r.OpenProblems, "open problem"))
		if r.Paused {
			line += ", paused"
		}
		b.WriteString(line + "\n")
	}
	if len(open) > 0 {
		b.WriteString("\nOpen problems:\n")
		for _, p := range open {
			fmt.Fprintf(&b, "\n%s %s: %s\n  reply: %s\n", p.Code, p.Repo, cutRunes(oneLine(p.Summary), maxSummaryRunes), offeredList(p.Replies))
		}
	}
	return b.String()
}

func offeredList(vs []problems.Verb) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
		if v.TakesWords() {
			parts[i] += " <words>"
		}
	}
	return strings.Join(parts, ", ")
}

func countText(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// JobDone is the payload of an outbox row of kind job_done, as the
// supervisor writes it (JSON). A payload that is not JSON is sent as text.
type JobDone struct {
	Repo    string `json:"repo"`
	Job     string `json:"job"`
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
}

// parseJobDone reads a job_done payload, tolerating plain text.
func parseJobDone(payload string) JobDone {
	var j JobDone
	if err := json.Unmarshal([]byte(payload), &j); err != nil || (j.Repo == "" && j.Job == "" && j.Summary == "") {
		return JobDone{Summary: strings.TrimSpace(payload)}
	}
	return j
}

// jobDoneSubject is "[agentkit] repo: job NAME: summary".
func jobDoneSubject(j JobDone) string {
	s := subjectTag
	if j.Repo != "" {
		s += " " + j.Repo + ":"
	}
	if j.Job != "" {
		s += " job " + j.Job
	}
	sum := oneLine(j.Summary)
	if sum == "" {
		sum = "finished"
	}
	if j.Job != "" {
		s += ":"
	}
	return s + " " + cutRunes(sum, maxSummaryRunes)
}

func jobDoneBody(j JobDone, owners []string, known ...string) string {
	var b strings.Builder
	if j.Job != "" {
		fmt.Fprintf(&b, "Job %s in %s has finished.\n\n", j.Job, orText(j.Repo, "its repository"))
	}
	if s := oneLine(j.Summary); s != "" {
		b.WriteString(wrapText(RedactLog(s, known...), wrapWidth))
		b.WriteString("\n")
	}
	if d := strings.TrimSpace(j.Detail); d != "" {
		b.WriteString("\n")
		b.WriteString(wrapText(RedactLog(d, known...), wrapWidth))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(obeyedFooter(owners))
	return b.String()
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
