package mailbot

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentkit/agentkit/problems"
)

// inboundAction is what the bot does about one inbound message.
type inboundAction string

// The actions, from the decision's steps: ignore (1) and refuse (2-4) send
// nothing; answer (5-6 failed) owes a short answer; obey records a decision;
// control runs status, pause, resume or help.
const (
	doIgnore  inboundAction = "ignored"
	doRefuse  inboundAction = "refused"
	doAnswer  inboundAction = "answered"
	doObey    inboundAction = "obeyed"
	doControl inboundAction = "control"
)

// ctlCommand names a command that needs no problem code.
type ctlCommand string

// The commands that need no code.
const (
	ctlStatus ctlCommand = "status"
	ctlPause  ctlCommand = "pause"
	ctlResume ctlCommand = "resume"
	ctlHelp   ctlCommand = "help"
)

// judgement is what the transport needs from the decision about a message.
type judgement struct {
	Action inboundAction
	// Authenticated messages passed steps 1-3; only they are remembered as
	// processed (by Message-ID and aligned signatures).
	Authenticated bool
	// Temporary means the decision could not be made now (a DNS failure
	// during DKIM verification): the message is left for a later try.
	Temporary bool
	MessageID string // without angle brackets
	From      string // the single From address
	Subject   string
	// References are the message's own References and In-Reply-To, so an
	// answer threads under it.
	References []string
	// Signatures are the b= values of the aligned DKIM signatures.
	Signatures []string
	Code       problems.Code
	Reply      problems.Reply
	Control    ctlCommand
	Repo       string
	// Reason says which check decided, for the phone log.
	Reason string
	// Why and Fix are the answer owed by doAnswer.
	Why, Fix string
	// Record is the full verdict, stored as JSON for `agentkit phone log`.
	Record json.RawMessage
}

// inboundDecider makes the decision about one raw message.
type inboundDecider interface {
	decide(ctx context.Context, raw []byte, internalDate time.Time) (judgement, error)
}

// inboundDeciderFunc adapts a function to inboundDecider.
type inboundDeciderFunc func(ctx context.Context, raw []byte, internalDate time.Time) (judgement, error)

func (f inboundDeciderFunc) decide(ctx context.Context, raw []byte, internalDate time.Time) (judgement, error) {
	return f(ctx, raw, internalDate)
}
