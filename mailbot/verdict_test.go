package mailbot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func genuineReply(t testing.TB, body string) []byte {
	keys()
	return sign(t, msg(replyHeaders(testNow.Add(-5*time.Minute), "CAKx1=reply1@mail.owner.test"), body), ownerEd, nil)
}

func checkNames(v Verdict) []string {
	var out []string
	for _, c := range v.Checks {
		out = append(out, c.Name+"="+c.Result)
	}
	return out
}

func TestDecideGenuineDKIMReply(t *testing.T) {
	raw := genuineReply(t, "retry\n\n"+quotedProblem)
	v := decideWith(t, raw, nil, nil, nil)
	if v.Outcome != OutcomeAct {
		t.Fatalf("outcome %s (%s); checks %q", v.Outcome, v.Reason, checkNames(v))
	}
	if v.Command == nil || v.Command.Verb != VerbRetry || v.Command.Code != code1 {
		t.Errorf("command %+v", v.Command)
	}
	if v.Auth == nil || v.Auth.Path != "dkim" || v.Auth.Domain != "owner.test" || !v.Auth.DateSigned {
		t.Errorf("auth %+v", v.Auth)
	}
	if !v.Remember || v.Signature == "" || v.MessageID != "CAKx1=reply1@mail.owner.test" || v.From != ownerAddr {
		t.Errorf("remember=%v signature=%q message-id=%q from=%q", v.Remember, v.Signature, v.MessageID, v.From)
	}
	want := []string{"size=pass", "ignore=pass", "from=pass", "duplicates=pass", "dkim=pass", "authres=skip", "fresh=pass", "command=pass", "code=pass"}
	if got := checkNames(v); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("checks %q, want %q", got, want)
	}
	// JSON for `agentkit phone check --json` and `phone log`.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Outcome != OutcomeAct || back.Command.Code != code1 || len(back.Checks) != 9 || back.Signatures[0].Domain != "owner.test" {
		t.Errorf("JSON round trip lost data: %s", b)
	}
	if !strings.Contains(string(b), `"check":"dkim","result":"pass"`) {
		t.Errorf("JSON: %s", b)
	}

	// Processed once, it never acts again.
	facts := newFakeFacts()
	facts.remember(v)
	again := decideWith(t, raw, nil, nil, facts)
	if again.Outcome != OutcomeRefuse {
		t.Errorf("second delivery: %s (%s)", again.Outcome, again.Reason)
	}
}

func TestDecideRSASignedReply(t *testing.T) {
	keys()
	raw := sign(t, msg(replyHeaders(testNow.Add(-time.Hour), "rsa1@mail.owner.test"), "hint use the v2 API\n\n"+quotedProblem), ownerRSA, nil)
	v := decideWith(t, raw, nil, nil, nil)
	if v.Outcome != OutcomeAct || v.Command.Verb != VerbHint || v.Command.Words != "use the v2 API" {
		t.Fatalf("%s %+v (%s)", v.Outcome, v.Command, v.Reason)
	}
}

func TestDecideProviderAuthenticationResults(t *testing.T) {
	keys()
	// Signed with a key the bot cannot find (rotated away), so only the
	// provider's verdict can authenticate it.
	base := sign(t, msg(replyHeaders(testNow.Add(-5*time.Minute), "prov1@mail.owner.test"), "skip\n\n"+quotedProblem), ownerUnpublished, nil)
	b := parseSigTags(splitFields(string(base))[0][len("DKIM-Signature:"):]).b

	t.Run("dkim pass", func(t *testing.T) {
		raw := delivered(base, "dkim=pass (2048-bit key; unprotected) header.d=owner.test header.i=@owner.test header.b=\""+b[:8]+"\";\n\tspf=pass smtp.mailfrom=jane@owner.test;\n\tdmarc=pass (p=reject) header.from=owner.test")
		v := decideWith(t, raw, nil, nil, nil)
		if v.Outcome != OutcomeAct || v.Auth.Path != "authres" || v.Auth.Method != "dkim" || v.Auth.AuthservID != providerID {
			t.Fatalf("%s %+v (%s) %q", v.Outcome, v.Auth, v.Reason, checkNames(v))
		}
		if v.Signature != b {
			t.Errorf("remembered signature %q, want the provider-verified %q", v.Signature, b)
		}
		if v.Auth.DateSigned {
			t.Error("the Date cannot count as signed on the authres path")
		}
	})
	t.Run("spf only, accepted by default", func(t *testing.T) {
		raw := delivered(base, "dkim=fail header.d=owner.test;\n\tspf=pass smtp.mailfrom=jane@owner.test")
		v := decideWith(t, raw, nil, nil, nil)
		if v.Outcome != OutcomeAct || v.Auth.Method != "spf" {
			t.Fatalf("%s %+v (%s)", v.Outcome, v.Auth, v.Reason)
		}
	})
	t.Run("spf only, refused when accept_spf_only is off", func(t *testing.T) {
		cfg := testConfig()
		cfg.AcceptSPFOnly = false
		raw := delivered(base, "spf=pass smtp.mailfrom=jane@owner.test;\n\tdmarc=pass header.from=owner.test")
		v := decideWith(t, raw, cfg, nil, nil)
		if v.Outcome != OutcomeRefuse || !strings.Contains(v.Reason, "accept_spf_only") {
			t.Fatalf("%s (%s)", v.Outcome, v.Reason)
		}
	})
}

func TestDecideCommands(t *testing.T) {
	cases := []struct {
		name, body string
		outcome    Outcome
		verb       Verb
		words      string
		code       string
		reason     string
	}{
		{"status needs no code", "Status\n\n" + quotedProblem, OutcomeAct, VerbStatus, "", "", ""},
		{"pause a repository", "pause web\n", OutcomeAct, VerbPause, "web", "", ""},
		{"hint with colon", "hint: use the v2 API\n\n" + quotedProblem, OutcomeAct, VerbHint, "use the v2 API", code1, ""},
		{"no command", "Thanks, will look tonight\n\n" + quotedProblem, OutcomeAnswer, "", "", "", "not a command"},
		{"hint without words", "hint\n\n" + quotedProblem, OutcomeAnswer, "", "", "", "needs words"},
		{"two codes", "hint see also " + code2 + " which failed the same way\n\n" + quotedProblem, OutcomeAnswer, "", "", "", "more than one problem"},
		{"explicit matching code", "retry " + code1 + "\n", OutcomeAct, VerbRetry, "", code1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := decideWith(t, genuineReply(t, tc.body), nil, nil, nil)
			if v.Outcome != tc.outcome {
				t.Fatalf("outcome %s, want %s (%s)", v.Outcome, tc.outcome, v.Reason)
			}
			if tc.reason != "" && !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", v.Reason, tc.reason)
			}
			if tc.outcome == OutcomeAnswer {
				if !v.Remember {
					t.Error("an authenticated message must be remembered")
				}
				return
			}
			if v.Command.Verb != tc.verb || v.Command.Words != tc.words || v.Command.Code != tc.code {
				t.Errorf("command %+v", *v.Command)
			}
		})
	}
}

func TestDecideCodeFromThreadNeedsSignedThreadHeaders(t *testing.T) {
	keys()
	h := replyHeaders(testNow.Add(-5*time.Minute), "thread1@mail.owner.test")
	h[2] = "Subject: Re: the failing gate" // no code in the subject
	body := "retry\n\n" + quotedProblem
	body = strings.ReplaceAll(body, "[agentkit] BCDFGH web", "web") // nor in the text
	signed := sign(t, msg(h, body), ownerEd, nil)
	v := decideWith(t, signed, nil, nil, nil)
	if v.Outcome != OutcomeAct || v.Command.CodeFrom != CodeFromThread || v.Command.Code != code1 {
		t.Fatalf("%s %+v (%s)", v.Outcome, v.Command, v.Reason)
	}
	unsigned := sign(t, msg(h, body), ownerEd, []string{"From", "To", "Subject", "Date", "Message-ID"})
	v = decideWith(t, unsigned, nil, nil, nil)
	if v.Outcome != OutcomeRefuse {
		t.Fatalf("%s (%s)", v.Outcome, v.Reason)
	}
	if c, _ := v.Find(CheckDKIM); !strings.Contains(c.Reason, "In-Reply-To, References") {
		t.Errorf("dkim reason %q", c.Reason)
	}
}

func TestDecideTemporaryDNSFailureRetries(t *testing.T) {
	dns := newFakeDNS()
	dns.fail["ed._domainkey.owner.test"] = true
	v := decideWith(t, genuineReply(t, "retry\n"), nil, dns, nil)
	if v.Outcome != OutcomeRetry || v.Remember {
		t.Fatalf("%s remember=%v (%s)", v.Outcome, v.Remember, v.Reason)
	}
}

func TestDecideStoreErrorIsReturned(t *testing.T) {
	facts := newFakeFacts()
	facts.err = errStore
	_, err := Decide(genuineReply(t, "retry\n"), testNow, testConfig(), Deps{
		Now: func() time.Time { return testNow }, LookupTXT: newFakeDNS().LookupTXT, Facts: facts,
	})
	if err == nil || !strings.Contains(err.Error(), "store unavailable") {
		t.Fatalf("err = %v", err)
	}
}

func TestDecideEveryVerdictListsAllChecks(t *testing.T) {
	v := decideWith(t, []byte("From: x@y\r\n\r\n"), nil, nil, nil)
	if len(v.Checks) != len(allChecks) {
		t.Fatalf("%d checks: %q", len(v.Checks), checkNames(v))
	}
	for i, c := range v.Checks {
		if c.Name != allChecks[i] {
			t.Errorf("check %d is %s, want %s", i, c.Name, allChecks[i])
		}
	}
}

func TestDecideWithoutStore(t *testing.T) {
	// agentkit phone check FILE: no store, no INTERNALDATE.
	v, err := Decide(genuineReply(t, "retry\n\n"+quotedProblem), time.Time{}, testConfig(), Deps{
		Now: func() time.Time { return testNow }, LookupTXT: newFakeDNS().LookupTXT,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Outcome != OutcomeAct || v.Command.Code != code1 || v.Command.CodeFrom != CodeFromSubject {
		t.Fatalf("%s %+v (%s)", v.Outcome, v.Command, v.Reason)
	}
}
