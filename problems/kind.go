package problems

import "fmt"

// Kind says what stopped a task.
type Kind string

// The kinds of problem, as DESIGN.md's failure table lists them.
const (
	GateFailed       Kind = "gate_failed"
	Crashed          Kind = "crashed"
	TimedOut         Kind = "timed_out"
	ReviewExhausted  Kind = "review_exhausted"
	AuthRequired     Kind = "auth_required"
	ModelUnavailable Kind = "model_unavailable"
	SetupFailed      Kind = "setup_failed"
	Unchanged        Kind = "unchanged"
	ReviewerFailed   Kind = "reviewer_failed"
	ScopeRequest     Kind = "scope_request"
	MergeConflict    Kind = "merge_conflict"
	FullGateFailed   Kind = "full_gate_failed"
	InvalidPlan      Kind = "invalid_plan"
	HumanReview      Kind = "human_review"
)

// Kinds lists every kind with the replies that can fix it.
var Kinds = map[Kind][]Verb{
	ReviewExhausted:  {Retry, Accept, Hint, Skip, Plan},
	GateFailed:       {Retry, Hint, Skip, Plan},
	Crashed:          {Retry, Hint, Skip, Plan},
	TimedOut:         {Retry, Hint, Skip, Plan},
	AuthRequired:     {Retry, Skip},
	ModelUnavailable: {Retry, Skip, Plan},
	SetupFailed:      {Retry, Hint, Skip},
	Unchanged:        {Retry, Hint, Skip, Plan},
	ReviewerFailed:   {Retry, Accept, Skip},
	ScopeRequest:     {Dismiss, Plan, Skip},
	MergeConflict:    {Retry, Hint, Skip, Plan},
	FullGateFailed:   {Retry, Hint, Skip, Plan},
	InvalidPlan:      {Retry, Hint, Plan},
	HumanReview:      {Accept, Retry, Hint, Skip},
}

// Replies returns the replies that can fix a problem of this kind.
func (k Kind) Replies() []Verb { return append([]Verb(nil), Kinds[k]...) }

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { _, ok := Kinds[k]; return ok }

// IsSetup reports whether the kind is a setup-type problem, which holds a job
// when two of its tasks fail the same way.
func (k Kind) IsSetup() bool {
	return k == SetupFailed || k == AuthRequired || k == ModelUnavailable
}

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if !k.Valid() {
		return "", fmt.Errorf("unknown problem kind %q", s)
	}
	return k, nil
}
