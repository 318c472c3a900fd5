package problems

import (
	"strings"
	"testing"
)

func TestParseReply(t *testing.T) {
	cases := []struct {
		in   string
		want Reply
	}{
		{"retry", Reply{Verb: Retry}},
		{"Retry", Reply{Verb: Retry}},
		{"RETRY", Reply{Verb: Retry}},
		{"  retry.  ", Reply{Verb: Retry}},
		{"Retry!", Reply{Verb: Retry}},
		{"accept", Reply{Verb: Accept}},
		{"Skip", Reply{Verb: Skip}},
		{"dismiss", Reply{Verb: Dismiss}},
		{"hint use the v2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"hint: use the v2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"HINT use the v2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"Hint:use the v2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"hint - use the v2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"Hint  use   the\nv2 API", Reply{Verb: Hint, Words: "use the v2 API"}},
		{"plan split the parser into two tasks", Reply{Verb: Plan, Words: "split the parser into two tasks"}},
		{"Plan: drop the CLI task", Reply{Verb: Plan, Words: "drop the CLI task"}},
		{"hint Nutze die v2-API, bitte", Reply{Verb: Hint, Words: "Nutze die v2-API, bitte"}},
	}
	for _, tc := range cases {
		got, err := ParseReply(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseReply(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseReplyErrors(t *testing.T) {
	cases := map[string]string{
		"":                "empty reply",
		"hint":            "needs words",
		"plan:":           "needs words",
		"retry it please": "takes no words",
		"retyr":           "is not a reply",
		"yes":             "is not a reply",
	}
	for in, want := range cases {
		_, err := ParseReply(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReply(%q) = %v; want error containing %q", in, err, want)
		}
	}
}

func TestKindsOfferDesignReplies(t *testing.T) {
	if len(Kinds) != 14 {
		t.Fatalf("%d kinds, DESIGN.md lists 14", len(Kinds))
	}
	if got := FormatVerbs(ScopeRequest.Replies()); got != "dismiss, plan, skip" {
		t.Errorf("scope_request offers %s", got)
	}
	if got := FormatVerbs(AuthRequired.Replies()); got != "retry, skip" {
		t.Errorf("auth_required offers %s", got)
	}
	if !SetupFailed.IsSetup() || GateFailed.IsSetup() {
		t.Error("IsSetup is wrong")
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"retry", "hint: use v2", "HINT use the v2 API", "plan", "skip now", "hint:", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReply(s)
		if err != nil {
			return
		}
		if r.Verb.TakesWords() != (r.Words != "") {
			t.Fatalf("%q parsed to %+v", s, r)
		}
		again, err := ParseReply(r.String())
		if err != nil || again != r {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, r, r.String(), again, err)
		}
	})
}
