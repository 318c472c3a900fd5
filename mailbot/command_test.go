package mailbot

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		in   string
		want Command
		err  string
	}{
		{in: "retry", want: Command{Verb: VerbRetry}},
		{in: "Retry.", want: Command{Verb: VerbRetry}},
		{in: "  RETRY!\n\nthanks", want: Command{Verb: VerbRetry}},
		{in: "retry, I fixed the key", want: Command{Verb: VerbRetry}},
		{in: "accept", want: Command{Verb: VerbAccept}},
		{in: "skip", want: Command{Verb: VerbSkip}},
		{in: "Dismiss", want: Command{Verb: VerbDismiss}},
		{in: "hint: use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "HINT use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "hint - use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "hint — use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "hint BCDFGH use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "BCDFGH hint use the v2 API", want: Command{Verb: VerbHint, Words: "use the v2 API"}},
		{in: "plan split it\ninto two tasks", want: Command{Verb: VerbPlan, Words: "split it\ninto two tasks"}},
		{in: "hint", err: "needs words"},
		{in: "hint:   ", err: "needs words"},
		{in: "plan", err: "needs words"},
		{in: "status", want: Command{Verb: VerbStatus}},
		{in: "help me", want: Command{Verb: VerbHelp}},
		{in: "pause", want: Command{Verb: VerbPause}},
		{in: "pause web-app.", want: Command{Verb: VerbPause, Words: "web-app"}},
		{in: "Resume api_v2\nthanks", want: Command{Verb: VerbResume, Words: "api_v2"}},
		{in: "pause BCDFGH", want: Command{Verb: VerbPause}},
		{in: "pause ../etc", err: "not a repository name"},
		{in: "", err: "empty"},
		{in: "retrying now", err: "not a command"},
		{in: "Thanks!", err: `"Thanks"`},
		{in: "¿retry?", err: "not a command"},
		{in: "don't retry", err: "not a command"},
	}
	for _, tc := range cases {
		got, err := ParseCommand(tc.in)
		if tc.err != "" {
			var ce *CommandError
			if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCommand(%q) = %+v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseCode(t *testing.T) {
	for in, want := range map[string]string{"BCDFGH": "BCDFGH", "bcdfgh": "BCDFGH", "KxTrZb": "KXTRZB", "ZZZZZZ": "ZZZZZZ"} {
		if got, ok := ParseCode(in); !ok || got != want {
			t.Errorf("ParseCode(%q) = %q, %v", in, got, ok)
		}
	}
	// Vowels, Y, L, digits, wrong lengths are not codes.
	for _, in := range []string{"BCDFGA", "BCDFGY", "BCDFGL", "BCDFG1", "BCDFG", "BCDFGHJ", "", "BCDFGÉ"} {
		if got, ok := ParseCode(in); ok {
			t.Errorf("ParseCode(%q) = %q, ok", in, got)
		}
	}
	if got := FindCodes("retry bcdfgh, and also KXTRZB; not BCDFGHJ or xBCDFGH, again BCDFGH"); !reflect.DeepEqual(got, []string{"BCDFGH", "KXTRZB"}) {
		t.Errorf("FindCodes = %q", got)
	}
}

func TestCleanSubject(t *testing.T) {
	cases := map[string][2]string{
		"Re: [agentkit] BCDFGH web: gate failed":       {"BCDFGH web: gate failed", "tagged"},
		"RE: Fwd: AW: SV: [agentkit] BCDFGH x":         {"BCDFGH x", "tagged"},
		"Re[2]: [AGENTKIT] BCDFGH x":                   {"BCDFGH x", "tagged"},
		"Re : retry BCDFGH":                            {"retry BCDFGH", ""},
		"WG: VS: Antw: retry":                          {"retry", ""},
		"回复：[agentkit] BCDFGH x":                       {"BCDFGH x", "tagged"},
		"Reply with retry":                             {"Reply with retry", ""},
		"Retry: what happened":                         {"Retry: what happened", ""},
		"Re: Re: [agentkit] Re: [agentkit] BCDFGH web": {"BCDFGH web", "tagged"},
	}
	for in, want := range cases {
		got, tagged := CleanSubject(in)
		if got != want[0] || tagged != (want[1] == "tagged") {
			t.Errorf("CleanSubject(%q) = %q, %v; want %q, %v", in, got, tagged, want[0], want[1] == "tagged")
		}
	}
}

func TestResolveCode(t *testing.T) {
	lookup := func(id string) (string, bool, error) {
		c, ok := map[string]string{problem1MID: code1, problem2MID: code2}[id]
		return c, ok, nil
	}
	cases := []struct {
		name       string
		src        CodeSources
		code, from string
		err        string
	}{
		{"text first", CodeSources{Text: "retry " + code1, Subject: "Re: [agentkit] " + code1 + " web", InReplyTo: []string{problem1MID}}, code1, CodeFromText, ""},
		{"subject next", CodeSources{Text: "retry", Subject: "Re: [agentkit] " + code1 + " web"}, code1, CodeFromSubject, ""},
		{"a code-shaped repository name in a bot subject is not a code", CodeSources{Text: "retry", Subject: "Re: [agentkit] " + code1 + " pkgmgr: gate failed"}, code1, CodeFromSubject, ""},
		{"thread last", CodeSources{Text: "retry", Subject: "Re: the gate", References: []string{"other@x", problem1MID}}, code1, CodeFromThread, ""},
		{"none", CodeSources{Text: "retry", Subject: "Re: the gate", References: []string{"other@x"}}, "", "", ""},
		{"hint naming another problem", CodeSources{Text: "hint like " + code2, Subject: "Re: [agentkit] " + code1 + " web"}, "", "", "more than one problem"},
		{"thread disagrees with the subject", CodeSources{Text: "retry", Subject: "retry " + code2, InReplyTo: []string{problem1MID}}, "", "", "KXTRZB (in the subject) and BCDFGH (in the thread)"},
		{"two problems in References", CodeSources{Text: "retry", References: []string{problem1MID, problem2MID}}, "", "", "more than one problem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, from, err := ResolveCode(tc.src, lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || code != tc.code || from != tc.from {
				t.Errorf("got %q from %q, %v; want %q from %q", code, from, err, tc.code, tc.from)
			}
		})
	}
	if _, _, err := ResolveCode(CodeSources{InReplyTo: []string{"x"}}, func(string) (string, bool, error) { return "", false, errStore }); !errors.Is(err, errStore) {
		t.Errorf("lookup error lost: %v", err)
	}
}
