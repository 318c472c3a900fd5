package mailbot

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The committed seeds are in testdata/fuzz/<FuzzName>/.

func FuzzTrimReply(f *testing.F) {
	f.Add("retry\n\nOn Tue, Mar 10, 2026 at 11:50 AM agentkit <bot@bot.test> wrote:\n> hello")
	f.Add("> quote\n\nreply below")
	f.Fuzz(func(t *testing.T, in string) {
		out := TrimReply(in)
		if len(out) > len(in) {
			t.Fatalf("output longer than input: %q -> %q", in, out)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input: %q -> %q", in, out)
		}
		if out != strings.TrimSpace(out) {
			t.Fatalf("output not trimmed: %q", out)
		}
		// HTML input goes through the converter first; it must not panic
		// or grow without bound either.
		if h := HTMLToText(in); len(h) > 2*len(in)+64 {
			t.Fatalf("HTMLToText grew %d -> %d bytes", len(in), len(h))
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	f.Add("hint: use the v2 API")
	f.Add("pause web-app")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseCommand(in)
		if err != nil {
			var ce *CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if _, ok := verbs[string(c.Verb)]; !ok {
			t.Fatalf("unknown verb %q from %q", c.Verb, in)
		}
		if c.Verb.NeedsWords() && c.Words == "" {
			t.Fatalf("%s without words from %q", c.Verb, in)
		}
		if c.Words != strings.TrimSpace(c.Words) {
			t.Fatalf("untrimmed words %q", c.Words)
		}
		if (c.Verb == VerbPause || c.Verb == VerbResume) && c.Words != "" && !isRepoName(c.Words) {
			t.Fatalf("bad repository %q from %q", c.Words, in)
		}
		if !c.Verb.NeedsWords() && c.Verb != VerbPause && c.Verb != VerbResume && c.Words != "" {
			t.Fatalf("%s carries words %q", c.Verb, c.Words)
		}
		// The canonical form reads back the same.
		if w, _ := firstWord(c.Words); c.Words != "" {
			if _, isCode := ParseCode(w); !isCode {
				back, err := ParseCommand(string(c.Verb) + " " + c.Words)
				if err != nil || back.Verb != c.Verb || back.Words != c.Words {
					t.Fatalf("%q parsed as %+v, its canonical form as %+v, %v", in, c, back, err)
				}
			}
		}
		for _, code := range FindCodes(in) {
			if _, ok := ParseCode(code); !ok || code != strings.ToUpper(code) {
				t.Fatalf("FindCodes returned %q", code)
			}
		}
	})
}

func FuzzParseAuthResults(f *testing.F) {
	f.Add("mx.example.net; dkim=pass (2048-bit key; unprotected) header.d=example.com header.b=\"abc\"")
	f.Add("spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.com; dkim=none")
	f.Fuzz(func(t *testing.T, in string) {
		ar, err := ParseAuthResults(in)
		if err != nil {
			if !errors.Is(err, ErrEmptyAuthResults) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if strings.ContainsAny(ar.AuthservID, " \t\r\n;") {
			t.Fatalf("authserv-id %q", ar.AuthservID)
		}
		for _, r := range ar.Results {
			if r.Method == "" || r.Method != strings.ToLower(r.Method) || strings.ContainsAny(r.Method, " \t\r\n;=") {
				t.Fatalf("method %q from %q", r.Method, in)
			}
			if r.Result != strings.ToLower(r.Result) || strings.ContainsAny(r.Result, " \t\r\n;") {
				t.Fatalf("result %q from %q", r.Result, in)
			}
			for k := range r.Props {
				if k != strings.ToLower(k) || k == "" || strings.ContainsAny(k, " \t\r\n;=") {
					t.Fatalf("property name %q from %q", k, in)
				}
			}
		}
	})
}

// FuzzDecide feeds arbitrary messages (seeded with signed replies and the
// spoofing table) to the whole decision: it never fails, never panics, its
// verdict always encodes, and it acts or answers only for an authenticated
// message from the owner with a Message-ID.
func FuzzDecide(f *testing.F) {
	keys()
	f.Add(genuineSigned(f, "fuzz1@mail.owner.test"))
	f.Add(msg(recentHeaders("fuzz2@evil.test"), retryBody))
	cfg := testConfig()
	dns := newFakeDNS()
	f.Fuzz(func(t *testing.T, raw []byte) {
		facts := newFakeFacts()
		v, err := Decide(raw, testNow.Add(-time.Minute), cfg, Deps{
			Now: func() time.Time { return testNow }, LookupTXT: dns.LookupTXT, Facts: facts,
		})
		if err != nil {
			t.Fatalf("Decide failed without a store error: %v", err)
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("verdict does not encode: %v", err)
		}
		if len(v.Checks) != len(allChecks) {
			t.Fatalf("%d checks", len(v.Checks))
		}
		switch v.Outcome {
		case OutcomeIgnore, OutcomeRefuse, OutcomeRetry:
			if v.StoppedBy == "" {
				t.Fatalf("%s without the deciding check", v.Outcome)
			}
		case OutcomeAnswer, OutcomeAct:
			if v.Auth == nil || !v.Remember || !cfg.IsOwner(v.From) || v.MessageID == "" {
				t.Fatalf("%s without authentication: %+v", v.Outcome, v)
			}
			if v.Outcome == OutcomeAct {
				if v.Command == nil || v.StoppedBy != "" {
					t.Fatalf("act without a command: %+v", v)
				}
				if v.Command.Verb.NeedsCode() {
					if _, ok := ParseCode(v.Command.Code); !ok {
						t.Fatalf("act on %s without a code", v.Command.Verb)
					}
				}
			}
		default:
			t.Fatalf("outcome %q", v.Outcome)
		}
	})
}
