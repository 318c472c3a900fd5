package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
)

// CheckProblem is the name of step 6 in a report: the code names an open
// problem that offers the reply. The mailbot's store applies it when it
// records the decision; check and test read it from the store.
const CheckProblem = "problem"

// judged is a verdict with step 6 added, as phone check and phone test
// report it.
type judged struct {
	File string `json:"file,omitempty"`
	mailbot.Verdict
	// Problem is step 6; nil when the verdict stopped before it.
	Problem *mailbot.Check `json:"problem,omitempty"`
	// Obeyed is whether the bot would act on the message.
	Obeyed bool `json:"would_obey"`
}

// judge adds step 6 to v: whether its code names an open problem offering
// the reply (read from the store; nothing is written).
func judge(ctx context.Context, s *problems.Store, v mailbot.Verdict) (judged, error) {
	j := judged{Verdict: v}
	if v.Outcome != mailbot.OutcomeAct || v.Command == nil {
		return j, nil
	}
	c := v.Command
	if !c.Verb.NeedsCode() {
		j.Obeyed = true
		return j, nil
	}
	code, err := problems.ParseCode(c.Code)
	if err != nil {
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultFail, Reason: err.Error()}
		return j, nil
	}
	p, err := s.Get(ctx, code)
	switch {
	case errors.Is(err, problems.ErrNotFound):
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultFail, Reason: fmt.Sprintf("no problem has the code %s; the bot would answer saying so", code)}
	case err != nil:
		return j, err
	case p.State != problems.Open:
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultFail, Reason: fmt.Sprintf("problem %s is %s, no longer open; the bot would answer saying so", code, p.State)}
	case !slices.Contains(p.Replies, problems.Verb(c.Verb)):
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultFail, Reason: fmt.Sprintf("problem %s does not offer %s; it offers %s", code, c.Verb, joinVerbs(p.Replies))}
	default:
		j.Problem = &mailbot.Check{Name: CheckProblem, Result: mailbot.ResultPass, Reason: fmt.Sprintf("problem %s is open and offers %s", code, c.Verb)}
		j.Obeyed = true
	}
	return j, nil
}

func joinVerbs(vs []problems.Verb) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// headline is the verdict in one line.
func (j judged) headline() string {
	if j.Obeyed {
		return "would be obeyed: " + commandText(j.Command)
	}
	if j.Problem != nil && j.Problem.Result == mailbot.ResultFail {
		return "would be answered, not obeyed: " + j.Problem.Reason
	}
	switch j.Outcome {
	case mailbot.OutcomeIgnore:
		return "would be ignored (" + j.StoppedBy + "): " + j.Reason
	case mailbot.OutcomeAnswer:
		return "would be answered, not obeyed (" + j.StoppedBy + "): " + j.Reason
	case mailbot.OutcomeRetry:
		return "would be checked again later (" + j.StoppedBy + "): " + j.Reason
	}
	return "would be refused at " + j.StoppedBy + ": " + j.Reason
}

func commandText(c *mailbot.Command) string {
	if c == nil {
		return ""
	}
	s := string(c.Verb)
	if c.Code != "" {
		s += " " + c.Code
	}
	if c.Words != "" {
		s += " " + c.Words
	}
	return s
}

// writeJudged prints every check in order with its result and reason, the
// signatures, and the command, code and words.
func writeJudged(w io.Writer, j judged) {
	if j.MessageID != "" || j.From != "" {
		fmt.Fprintf(w, "  message    %s from %s %q\n", orDash(j.MessageID), orDash(j.From), j.Subject)
	}
	checks := j.Checks
	if j.Problem != nil {
		checks = append(slices.Clip(checks), *j.Problem)
	}
	for _, c := range checks {
		mark := "✓"
		switch c.Result {
		case mailbot.ResultFail:
			mark = "✗"
		case mailbot.ResultSkip:
			mark = "·"
		}
		reason := c.Reason
		if reason == "" && c.Result == mailbot.ResultSkip {
			reason = "not reached"
		}
		fmt.Fprintf(w, "  %s %-10s %s\n", mark, c.Name, reason)
	}
	for _, s := range j.Signatures {
		line := fmt.Sprintf("d=%s", s.Domain)
		if s.Selector != "" {
			line += " s=" + s.Selector
		}
		line += ": " + s.Result
		if s.Error != "" {
			line += " (" + s.Error + ")"
		}
		if s.Aligned {
			line += ", aligned with the From domain"
		} else {
			line += ", not aligned with the From domain"
		}
		if s.BodyLength {
			line += ", has l= (never counts)"
		}
		if len(s.Unsigned) > 0 {
			line += ", does not sign " + strings.Join(s.Unsigned, ", ")
		}
		fmt.Fprintf(w, "  signature  %s\n", line)
	}
	if a := authLine(j.Verdict); a != "" && j.Auth != nil {
		fmt.Fprintf(w, "  auth       %s\n", strings.TrimPrefix(a, "authenticated by "))
	}
	if c := j.Command; c != nil {
		fmt.Fprintf(w, "  command    %s\n", c.Verb)
		if c.Code != "" {
			fmt.Fprintf(w, "  code       %s (from the %s)\n", c.Code, c.CodeFrom)
		}
		if c.Words != "" {
			fmt.Fprintf(w, "  words      %q\n", c.Words)
		}
	}
}
