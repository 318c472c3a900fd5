package problems

import (
	"fmt"
	"strings"
	"unicode"
)

// Verb is the first word of a reply.
type Verb string

// The replies a problem can offer.
const (
	Retry   Verb = "retry"
	Accept  Verb = "accept"
	Skip    Verb = "skip"
	Dismiss Verb = "dismiss"
	Hint    Verb = "hint"
	Plan    Verb = "plan"
)

// Verbs lists every verb in the order they are shown.
var Verbs = []Verb{Retry, Accept, Skip, Dismiss, Hint, Plan}

// Meaning says in one line what a verb does.
func (v Verb) Meaning() string {
	switch v {
	case Retry:
		return "run the stopped step again (after you fixed the cause)"
	case Accept:
		return "take the builder's reviewed commit; its checks must still pass"
	case Skip:
		return "cancel the task and every task that depends on it"
	case Dismiss:
		return "close the request for more files; the task keeps its scope"
	case Hint:
		return "the same builder continues its session with your words"
	case Plan:
		return "the coordinator re-plans the job with your words"
	}
	return ""
}

// TakesWords reports whether the verb needs words after it.
func (v Verb) TakesWords() bool { return v == Hint || v == Plan }

// Reply is an answer to a problem: a verb and, for hint and plan, words.
type Reply struct {
	Verb  Verb   `json:"reply"`
	Words string `json:"words,omitempty"`
}

// String renders the reply as it would be typed.
func (r Reply) String() string {
	if r.Words == "" {
		return string(r.Verb)
	}
	return string(r.Verb) + " " + r.Words
}

// ParseVerb reads a verb case-insensitively, ignoring trailing punctuation.
func ParseVerb(s string) (Verb, bool) {
	w := strings.ToLower(strings.TrimRightFunc(strings.TrimSpace(s), func(r rune) bool {
		return r == ':' || r == ',' || r == '.' || r == '!' || r == '-' || r == ';'
	}))
	for _, v := range Verbs {
		if string(v) == w {
			return v, true
		}
	}
	return "", false
}

// ParseReply reads a reply from free text: "Retry", "hint: use the v2 API"
// and "HINT use the v2 API" all parse; words keep their case.
func ParseReply(text string) (Reply, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Reply{}, fmt.Errorf("empty reply: %s", replyUsage)
	}
	first, rest := splitFirstWord(text)
	v, ok := ParseVerb(first)
	if !ok {
		// "hint:use" without a space after the colon.
		if head, tail, found := strings.Cut(first, ":"); found {
			if v2, ok2 := ParseVerb(head); ok2 {
				v, ok, rest = v2, true, strings.TrimSpace(tail+" "+rest)
			}
		}
	}
	if !ok {
		return Reply{}, fmt.Errorf("%q is not a reply: %s", first, replyUsage)
	}
	rest = strings.TrimLeftFunc(rest, func(r rune) bool { return r == ':' || r == '-' || unicode.IsSpace(r) })
	rest = strings.Join(strings.Fields(rest), " ")
	if v.TakesWords() {
		if rest == "" {
			return Reply{}, fmt.Errorf("%s needs words after it, like: %s use the v2 API", v, v)
		}
		return Reply{Verb: v, Words: rest}, nil
	}
	if rest != "" {
		return Reply{}, fmt.Errorf("%s takes no words (got %q); to give the builder words, reply: hint %s", v, rest, rest)
	}
	return Reply{Verb: v}, nil
}

const replyUsage = "reply with retry, accept, skip, dismiss, hint <words> or plan <words>"

func splitFirstWord(s string) (string, string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// FormatVerbs joins verbs for a message: "retry, hint, skip".
func FormatVerbs(vs []Verb) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}
