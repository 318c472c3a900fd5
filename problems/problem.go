package problems

import (
	"errors"
	"fmt"
	"time"
)

// State is where a problem is in its life.
type State string

// The states of a problem: open until answered, closed once the answer was applied.
const (
	Open     State = "open"
	Answered State = "answered"
	Closed   State = "closed"
)

// Channel names where an answer came from.
type Channel string

// The channels an answer can come through.
const (
	Terminal Channel = "terminal"
	Email    Channel = "email"
)

// Problem is what the automatic retries could not fix.
type Problem struct {
	Code      Code      `json:"code"`
	Repo      string    `json:"repo"`
	Job       string    `json:"job,omitempty"`
	Task      string    `json:"task,omitempty"`
	Kind      Kind      `json:"kind"`
	Summary   string    `json:"summary"`
	Detail    string    `json:"detail,omitempty"`
	LogTail   string    `json:"log_tail,omitempty"`
	Replies   []Verb    `json:"replies"`
	State     State     `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Decision  *Decision `json:"decision,omitempty"`

	id int64
}

// ID returns the problem's row id in the store.
func (p *Problem) ID() int64 { return p.id }

// Offers reports whether the problem can be fixed by the verb.
func (p *Problem) Offers(v Verb) bool {
	for _, r := range p.Replies {
		if r == v {
			return true
		}
	}
	return false
}

// Decision is an answer to a problem, from any channel.
type Decision struct {
	ID int64 `json:"id"`
	// ProblemID is the problem's row id in the store.
	ProblemID int64     `json:"-"`
	Code      Code      `json:"code"`
	Reply     Verb      `json:"reply"`
	Words     string    `json:"words,omitempty"`
	Channel   Channel   `json:"channel"`
	Who       string    `json:"who"`
	SourceID  string    `json:"source_id,omitempty"`
	At        time.Time `json:"at"`
	AppliedAt time.Time `json:"applied_at,omitzero"`
	Outcome   string    `json:"outcome,omitempty"`
}

// Applied reports whether the supervisor has applied the decision.
func (d *Decision) Applied() bool { return !d.AppliedAt.IsZero() }

// New describes a problem to create.
type New struct {
	Repo    string
	Job     string
	Task    string
	Kind    Kind
	Summary string
	Detail  string
	LogTail string
	// Replies defaults to the kind's replies; when given it must be a subset.
	Replies []Verb
}

// Answer is a reply to record as a decision.
type Answer struct {
	Reply    Reply
	Channel  Channel
	Who      string
	SourceID string
}

// Sentinel errors, for errors.Is.
var (
	ErrNotFound   = errors.New("problems: no such problem")
	ErrNotOpen    = errors.New("problems: problem is not open")
	ErrNotOffered = errors.New("problems: reply not offered")
)

// NotFoundError says no problem has the code.
type NotFoundError struct{ Code Code }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no problem %s (agentkit problem list --all shows every problem)", e.Code)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotOpenError says the problem was already answered.
type NotOpenError struct {
	Code     Code
	State    State
	Decision *Decision
}

func (e *NotOpenError) Error() string {
	if d := e.Decision; d != nil {
		return fmt.Sprintf("problem %s is %s: it was answered %q by %s through %s at %s", e.Code, e.State,
			Reply{Verb: d.Reply, Words: d.Words}.String(), d.Who, d.Channel, d.At.Local().Format("2006-01-02 15:04"))
	}
	return fmt.Sprintf("problem %s is %s, not open", e.Code, e.State)
}

// Is makes errors.Is(err, ErrNotOpen) true.
func (e *NotOpenError) Is(target error) bool { return target == ErrNotOpen }

// NotOfferedError says the problem cannot be fixed by that reply.
type NotOfferedError struct {
	Code    Code
	Reply   Verb
	Offered []Verb
}

func (e *NotOfferedError) Error() string {
	return fmt.Sprintf("problem %s does not offer %s; it offers: %s", e.Code, e.Reply, FormatVerbs(e.Offered))
}

// Is makes errors.Is(err, ErrNotOffered) true.
func (e *NotOfferedError) Is(target error) bool { return target == ErrNotOffered }
