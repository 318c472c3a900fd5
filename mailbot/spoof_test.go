package mailbot

import (
	"strings"
	"testing"
	"time"
)

// spoofCase is a message that must never act, and the check that stops it.
type spoofCase struct {
	name string
	raw  func(t testing.TB) []byte
	// prepare adjusts the store, settings or DNS for the case.
	prepare func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS)
	stop    string   // the check that must decide
	reason  []string // words its reason must hold
	dkim    []string // words the dkim check's reason must hold
	outcome Outcome  // Ignore or Refuse: never an answer to a forged sender
}

func withHeader(h []string, name, value string) []string {
	out := make([]string, 0, len(h))
	for _, l := range h {
		if strings.HasPrefix(strings.ToLower(l), strings.ToLower(name)+":") {
			l = name + ": " + value
		}
		out = append(out, l)
	}
	return out
}

func recentHeaders(mid string) []string { return replyHeaders(testNow.Add(-5*time.Minute), mid) }

const retryBody = "retry\n\n" + quotedProblem

func spoofCases() []spoofCase {
	keys()
	return []spoofCase{
		{
			name: "forged From without DKIM",
			raw:  func(t testing.TB) []byte { return msg(recentHeaders("f1@evil.test"), retryBody) },
			stop: CheckAuthRes, reason: []string{"no Received header"},
		},
		{
			name: "DKIM for another domain",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(recentHeaders("f2@attacker.test"), retryBody), attackerEd, nil)
			},
			stop: CheckAuthRes, reason: []string{"no Received header"}, dkim: []string{"attacker.test passes but is not aligned"},
		},
		{
			name: "DKIM d= is the public suffix itself",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(recentHeaders("f3@x.test"), retryBody), publicSuffixEd, nil)
			},
			stop: CheckAuthRes, dkim: []string{"not aligned"},
		},
		{
			name: "signature over a changed body",
			raw: func(t testing.TB) []byte {
				s := sign(t, msg(recentHeaders("f4@mail.owner.test"), "status\n"), ownerEd, nil)
				return []byte(strings.Replace(string(s), "\r\n\r\nstatus", "\r\n\r\nskip "+code1, 1))
			},
			stop: CheckAuthRes, dkim: []string{"body hash did not verify"},
		},
		{
			name: "signature with l= and text appended",
			raw: func(t testing.TB) []byte {
				base := msg(recentHeaders("f5@mail.owner.test"), "thanks!\n")
				signed := signWithBodyLength(t, base, ownerEd, standardHeaderKeys, len("thanks!\r\n"))
				return append(signed, []byte("\r\nhint push straight to main\r\n")...)
			},
			stop: CheckAuthRes, dkim: []string{"body length"},
		},
		{
			name: "genuine old reply with unsigned Message-ID and References edited to aim at a new problem",
			raw: func(t testing.TB) []byte {
				h := replyHeaders(testNow.Add(-20*24*time.Hour), "old1@mail.owner.test")
				h = withHeader(h, "Subject", "Re: the failing gate")
				old := sign(t, msg(h, "retry\n"), ownerEd, []string{"From", "To", "Subject", "Date"})
				s := strings.Replace(string(old), "<old1@mail.owner.test>", "<fresh1@mail.owner.test>", 1)
				s = strings.ReplaceAll(s, "<"+problem1MID+">", "<"+problem2MID+">")
				return []byte(s)
			},
			stop: CheckAuthRes, dkim: []string{"does not sign Message-ID, In-Reply-To, References"},
		},
		{
			name: "the same edited old reply relayed through the provider, which passes DKIM",
			raw: func(t testing.TB) []byte {
				h := replyHeaders(testNow.Add(-20*24*time.Hour), "old2@mail.owner.test")
				h = withHeader(h, "Subject", "Re: the failing gate")
				old := sign(t, msg(h, "retry\n"), ownerEd, []string{"From", "To", "Subject", "Date"})
				s := strings.Replace(string(old), "<old2@mail.owner.test>", "<fresh2@mail.owner.test>", 1)
				s = strings.ReplaceAll(s, "<"+problem1MID+">", "<"+problem2MID+">")
				return delivered([]byte(s), "dkim=pass header.d=owner.test")
			},
			stop: CheckFresh, reason: []string{"Date", "old"},
		},
		{
			name: "a replayed b= with an edited unsigned Date, relayed through the provider",
			raw: func(t testing.TB) []byte {
				h := replyHeaders(testNow.Add(-20*24*time.Hour), "old3@mail.owner.test")
				old := sign(t, msg(h, "retry\n"), ownerEd, []string{"From", "To", "Subject", "Message-ID"})
				s := strings.Replace(string(old), "Date: "+testNow.Add(-20*24*time.Hour).Format(time.RFC1123Z), "Date: "+testNow.Add(-time.Minute).Format(time.RFC1123Z), 1)
				s = strings.Replace(s, "<old3@mail.owner.test>", "<old3b@mail.owner.test>", 1)
				return delivered([]byte(s), "dkim=pass header.d=owner.test")
			},
			prepare: func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS) {
				// The original was obeyed twenty days ago: its b= is remembered.
				h := replyHeaders(testNow.Add(-20*24*time.Hour), "old3@mail.owner.test")
				old := sign(t, msg(h, "retry\n"), ownerEd, []string{"From", "To", "Subject", "Message-ID"})
				f.processedSig[parseSigTags(splitFields(string(old))[0][len("DKIM-Signature:"):]).b] = true
			},
			stop: CheckFresh, reason: []string{"processed before"},
		},
		{
			name: "duplicated From fields",
			raw: func(t testing.TB) []byte {
				s := sign(t, msg(recentHeaders("d1@mail.owner.test"), retryBody), ownerEd, nil)
				return prepend(s, "From: Jane Doe <jane@owner.test>")
			},
			stop: CheckFrom, reason: []string{"2 From fields"},
		},
		{
			name: "duplicated Date",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d2@mail.owner.test"), "Date: "+testNow.Format(time.RFC1123Z))
			},
			stop: CheckDuplicates, reason: []string{"Date (2 times)"},
		},
		{
			name: "duplicated Subject",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d3@mail.owner.test"), "Subject: Re: [agentkit] "+code2+" api: crashed")
			},
			stop: CheckDuplicates, reason: []string{"Subject (2 times)"},
		},
		{
			name: "duplicated Message-ID",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d4@mail.owner.test"), "Message-ID: <new@mail.owner.test>")
			},
			stop: CheckDuplicates, reason: []string{"Message-Id (2 times)"},
		},
		{
			name: "duplicated References",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d5@mail.owner.test"), "References: <"+problem2MID+">")
			},
			stop: CheckDuplicates, reason: []string{"References (2 times)"},
		},
		{
			name: "duplicated In-Reply-To",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d6@mail.owner.test"), "In-Reply-To: <"+problem2MID+">")
			},
			stop: CheckDuplicates, reason: []string{"In-Reply-To (2 times)"},
		},
		{
			name: "duplicated Sender",
			raw: func(t testing.TB) []byte {
				return prepend(genuineSigned(t, "d7@mail.owner.test"), "Sender: jane@owner.test", "Sender: x@evil.test")
			},
			stop: CheckDuplicates, reason: []string{"Sender (2 times)"},
		},
		{
			name: "forged Authentication-Results on a message with no inbound Received (appended over IMAP)",
			raw: func(t testing.TB) []byte {
				return prepend(msg(recentHeaders("a1@evil.test"), retryBody),
					"Authentication-Results: "+providerID+"; dkim=pass header.d=owner.test; spf=pass smtp.mailfrom=owner.test; dmarc=pass header.from=owner.test")
			},
			stop: CheckAuthRes, reason: []string{"no Received header"},
		},
		{
			name: "display-name trick: the owner's address as the display name",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("n1@attacker.test"), "From", `"jane@owner.test" <eve@attacker.test>`)
				return sign(t, msg(h, retryBody), attackerEd, nil)
			},
			stop: CheckFrom, reason: []string{"eve@attacker.test", "not an owner"},
		},
		{
			name: "display-name trick: a bare address before the real one",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("n2@attacker.test"), "From", `jane@owner.test <eve@attacker.test>`)
				return sign(t, msg(h, retryBody), attackerEd, nil)
			},
			stop: CheckFrom,
		},
		{
			name: "two addresses in From",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("n3@attacker.test"), "From", `jane@owner.test, eve@attacker.test`)
				return sign(t, msg(h, retryBody), attackerEd, nil)
			},
			stop: CheckFrom, reason: []string{"2 addresses"},
		},
		{
			name: "a look-alike address that Unicode case folding would equate (Kelvin sign)",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("n4@mail.owner.test"), "From", "\u212aate <\u212aate@owner.test>")
				return sign(t, msg(h, retryBody), ownerEd, nil)
			},
			prepare: func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS) {
				c.OwnerAddresses = []string{"kate@owner.test"}
			},
			stop: CheckFrom,
		},
		{
			name: "forged Authentication-Results from the sender, below the provider's, with the provider's authserv-id",
			raw: func(t testing.TB) []byte {
				forged := prepend(msg(recentHeaders("a2@evil.test"), retryBody),
					"Authentication-Results: "+providerID+"; dkim=pass header.d=owner.test header.i=@owner.test")
				return prepend(forged,
					"Authentication-Results: "+providerID+"; dkim=none; spf=fail smtp.mailfrom=owner.test",
					"Received: from mail.evil.test (mail.evil.test [198.51.100.7]) by "+providerHost+" (Postfix) with ESMTPS id 77; Tue, 10 Mar 2026 11:55:02 +0000")
			},
			stop: CheckAuthRes, reason: []string{"spf=fail"},
		},
		{
			name: "forged Authentication-Results below the inbound Received, with nothing above",
			raw: func(t testing.TB) []byte {
				forged := prepend(msg(recentHeaders("a3@evil.test"), retryBody),
					"Authentication-Results: "+providerID+"; dkim=pass header.d=owner.test")
				return prepend(forged,
					"Received: from mail.evil.test (mail.evil.test [198.51.100.7]) by "+providerHost+" (Postfix) with ESMTPS id 78; Tue, 10 Mar 2026 11:55:02 +0000")
			},
			stop: CheckAuthRes, reason: []string{"below the inbound Received"},
		},
		{
			name: "trusted headers disagree",
			raw: func(t testing.TB) []byte {
				return prepend(delivered(msg(recentHeaders("a4@evil.test"), retryBody), "dkim=pass header.d=owner.test"),
					"Authentication-Results: "+providerID+"; dkim=fail reason=\"signature verification failed\" header.d=owner.test")
			},
			stop: CheckAuthRes, reason: []string{"worst"},
		},
		{
			name: "ARC-only pass",
			raw: func(t testing.TB) []byte {
				return prepend(delivered(msg(recentHeaders("a5@evil.test"), retryBody), "dkim=none; spf=softfail smtp.mailfrom=owner.test"),
					"ARC-Authentication-Results: i=1; "+providerID+"; dkim=pass header.d=owner.test; spf=pass smtp.mailfrom=owner.test; dmarc=pass header.from=owner.test")
			},
			stop: CheckAuthRes,
		},
		{
			name: "Authentication-Results without authserv-id (never counts)",
			raw: func(t testing.TB) []byte {
				return prepend(delivered(msg(recentHeaders("a6@evil.test"), retryBody), "none"),
					"Authentication-Results: spf=pass (sender IP is 192.0.2.10) smtp.mailfrom=owner.test; dkim=pass (signature was verified) header.d=owner.test;dmarc=pass action=none header.from=owner.test")
			},
			stop: CheckAuthRes, reason: []string{"without authserv-id"},
		},
		{
			name: "untrusted authserv-id",
			raw: func(t testing.TB) []byte {
				return prepend(delivered(msg(recentHeaders("a7@evil.test"), retryBody), "none"),
					"Authentication-Results: mx.evil.test; dkim=pass header.d=owner.test")
			},
			stop: CheckAuthRes, reason: []string{"mx.evil.test (not trusted)"},
		},
		{
			name: "provider dkim=pass for an unaligned domain",
			raw: func(t testing.TB) []byte {
				return delivered(msg(recentHeaders("a8@evil.test"), retryBody), "dkim=pass header.d=attacker.test; spf=pass smtp.mailfrom=eve@attacker.test")
			},
			stop: CheckAuthRes, reason: []string{"not aligned"},
		},
		{
			name: "provider spf=pass for a subdomain only (strict)",
			raw: func(t testing.TB) []byte {
				return delivered(msg(recentHeaders("a9@evil.test"), retryBody), "spf=pass smtp.mailfrom=bounce@lists.owner.test")
			},
			stop: CheckAuthRes, reason: []string{"envelope sender"},
		},
		{
			name: "provider dmarc=fail vetoes an spf pass",
			raw: func(t testing.TB) []byte {
				return delivered(msg(recentHeaders("a10@evil.test"), retryBody), "spf=pass smtp.mailfrom=owner.test; dmarc=fail header.from=owner.test")
			},
			stop: CheckAuthRes, reason: []string{"dmarc=fail"},
		},
		{
			name: "SPF-only pass when accept_spf_only is off",
			raw: func(t testing.TB) []byte {
				return delivered(msg(recentHeaders("a11@evil.test"), retryBody), "spf=pass smtp.mailfrom=jane@owner.test")
			},
			prepare: func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS) { c.AcceptSPFOnly = false },
			stop:    CheckAuthRes, reason: []string{"accept_spf_only"},
		},
		{
			name: "code read from an unsigned Subject",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("s1@mail.owner.test"), "Subject", "Re: the failing gate")
				s := sign(t, msg(h, ""), ownerEd, []string{"From", "Date", "Message-ID", "In-Reply-To", "References"})
				return []byte(strings.Replace(string(s), "Subject: Re: the failing gate", "Subject: skip "+code2, 1))
			},
			stop: CheckAuthRes, dkim: []string{"does not sign Subject"},
		},
		{
			name: "replayed Message-ID",
			raw:  func(t testing.TB) []byte { return genuineSigned(t, "r1@mail.owner.test") },
			prepare: func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS) {
				f.processed["r1@mail.owner.test"] = true
			},
			stop: CheckFresh, reason: []string{"was processed before"},
		},
		{
			name: "replayed signature under a Message-ID the store never saw",
			raw:  func(t testing.TB) []byte { return genuineSigned(t, "r2@mail.owner.test") },
			prepare: func(t testing.TB, f *fakeFacts, c *Config, d *fakeDNS) {
				s := genuineSigned(t, "r2@mail.owner.test")
				f.processedSig[parseSigTags(splitFields(string(s))[0][len("DKIM-Signature:"):]).b] = true
			},
			stop: CheckFresh, reason: []string{"signature was processed before"},
		},
		{
			name: "old Date",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(replyHeaders(testNow.Add(-8*24*time.Hour), "o1@mail.owner.test"), retryBody), ownerEd, nil)
			},
			stop: CheckFresh, reason: []string{"signed Date", "max_age"},
		},
		{
			name: "pause older than control_max_age",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(replyHeaders(testNow.Add(-2*time.Hour), "o2@mail.owner.test"), "pause\n"), ownerEd, nil)
			},
			stop: CheckFresh, reason: []string{"control_max_age"},
		},
		{
			name: "a signed Date far in the future",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(replyHeaders(testNow.Add(30*24*time.Hour), "o3@mail.owner.test"), retryBody), ownerEd, nil)
			},
			stop: CheckFresh, reason: []string{"future"},
		},
		{
			name: "auto-reply carrying a valid command",
			raw: func(t testing.TB) []byte {
				h := append(recentHeaders("x1@mail.owner.test"), "Auto-Submitted: auto-replied")
				return sign(t, msg(h, retryBody), ownerEd, append(standardHeaderKeys, "Auto-Submitted"))
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"Auto-Submitted"},
		},
		{
			name: "out-of-office subject carrying a valid command",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("x2@mail.owner.test"), "Subject", "Automatic reply: [agentkit] "+code1+" web: gate failed")
				return sign(t, msg(h, "retry\n"), ownerEd, nil)
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"automatic reply"},
		},
		{
			name: "X-Autoreply",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(append(recentHeaders("x3@mail.owner.test"), "X-Autoreply: yes"), "retry\n"), ownerEd, nil)
			},
			stop: CheckIgnore, outcome: OutcomeIgnore,
		},
		{
			name: "Precedence: bulk",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(append(recentHeaders("x4@mail.owner.test"), "Precedence: bulk"), "retry\n"), ownerEd, nil)
			},
			stop: CheckIgnore, outcome: OutcomeIgnore,
		},
		{
			name: "bounce: a delivery status notification from MAILER-DAEMON",
			raw: func(t testing.TB) []byte {
				return msg([]string{
					"Return-Path: <>",
					"From: Mail Delivery System <MAILER-DAEMON@mail.owner.test>",
					"To: " + botAddr,
					"Subject: Undelivered Mail Returned to Sender",
					"Date: " + testNow.Format(time.RFC1123Z),
					"Message-ID: <dsn1@mail.owner.test>",
					"MIME-Version: 1.0",
					`Content-Type: multipart/report; report-type=delivery-status; boundary="b1"`,
				}, "--b1\nContent-Type: text/plain\n\nretry "+code1+"\n--b1\nContent-Type: message/delivery-status\n\nAction: failed\n--b1--\n")
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"Return-Path"},
		},
		{
			name: "mailer-daemon sender without other signs",
			raw: func(t testing.TB) []byte {
				h := withHeader(recentHeaders("x5@mail.owner.test"), "From", "postmaster@owner.test")
				return msg(h, "retry\n")
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"postmaster"},
		},
		{
			name: "the bot's own message",
			raw: func(t testing.TB) []byte {
				return msg([]string{"From: agentkit <" + botAddr + ">", "To: " + ownerAddr, "Subject: [agentkit] " + code1 + " web: gate failed",
					"Date: " + testNow.Format(time.RFC1123Z), "Message-ID: <" + problem1MID + ">"}, "Reply with one of:\nretry\n")
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"bot's own"},
		},
		{
			name: "a Message-ID in the bot's own domain",
			raw: func(t testing.TB) []byte {
				return genuineSigned(t, "c1."+code1+"@"+ownMIDDomain)
			},
			stop: CheckIgnore, outcome: OutcomeIgnore, reason: []string{"bot's own"},
		},
		{
			name: "over the size limit",
			raw: func(t testing.TB) []byte {
				return genuineReply(t, "retry\n\n"+strings.Repeat("> padding line of the quoted problem\n", 40000))
			},
			stop: CheckSize, reason: []string{"max_message_bytes"},
		},
		{
			name: "no Message-ID",
			raw: func(t testing.TB) []byte {
				h := recentHeaders("m1@mail.owner.test")
				var out []string
				for _, l := range h {
					if !strings.HasPrefix(l, "Message-ID") {
						out = append(out, l)
					}
				}
				return sign(t, msg(out, retryBody), ownerEd, nil)
			},
			stop: CheckDuplicates, reason: []string{"no Message-ID"},
		},
		{
			name: "a signing key that cannot be found",
			raw: func(t testing.TB) []byte {
				return sign(t, msg(recentHeaders("k1@mail.owner.test"), retryBody), ownerUnpublished, nil)
			},
			stop: CheckAuthRes, dkim: []string{"permerror", "no key"},
		},
	}
}

// genuineSigned is a proper, signed reply asking to retry problem 1.
func genuineSigned(t testing.TB, mid string) []byte {
	return sign(t, msg(recentHeaders(mid), retryBody), ownerEd, nil)
}

// TestSpoofingTable: none of these messages may act, none may be answered
// (an answer would go to a forged sender), and each is stopped by the
// check that should stop it.
func TestSpoofingTable(t *testing.T) {
	cases := spoofCases()
	if len(cases) < 25 {
		t.Fatalf("only %d spoofing cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			facts, cfg, dns := newFakeFacts(), testConfig(), newFakeDNS()
			if tc.prepare != nil {
				tc.prepare(t, facts, cfg, dns)
			}
			v := decideWith(t, tc.raw(t), cfg, dns, facts)
			want := tc.outcome
			if want == "" {
				want = OutcomeRefuse
			}
			if v.Outcome == OutcomeAct || v.Outcome == OutcomeAnswer {
				t.Fatalf("outcome %s: %s", v.Outcome, v.Reason)
			}
			if v.Outcome != want {
				t.Errorf("outcome %s, want %s (%s)", v.Outcome, want, v.Reason)
			}
			if v.StoppedBy != tc.stop {
				t.Fatalf("stopped by %q (%s), want %s; checks %q", v.StoppedBy, v.Reason, tc.stop, checkNames(v))
			}
			failed, _ := v.Find(v.StoppedBy)
			if failed.Result != ResultFail || failed.Reason != v.Reason {
				t.Errorf("deciding check %+v does not match the verdict's reason %q", failed, v.Reason)
			}
			for _, w := range tc.reason {
				if !strings.Contains(failed.Reason, w) {
					t.Errorf("reason %q lacks %q", failed.Reason, w)
				}
			}
			dk, _ := v.Find(CheckDKIM)
			for _, w := range tc.dkim {
				if !strings.Contains(dk.Reason, w) {
					t.Errorf("dkim reason %q lacks %q", dk.Reason, w)
				}
			}
			if tc.stop == CheckAuthRes && dk.Result != ResultFail {
				t.Errorf("refused by authres although dkim is %s", dk.Result)
			}
			if v.Command != nil && v.Outcome != OutcomeIgnore {
				t.Errorf("a refused message carries a command: %+v", v.Command)
			}
		})
	}
}
