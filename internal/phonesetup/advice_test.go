package phonesetup

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/mailbot"
)

// testFacts knows one test email, whose thread carries the test code.
type testFacts struct{}

func (testFacts) IsProcessed(string) (bool, error)          { return false, nil }
func (testFacts) IsProcessedSignature(string) (bool, error) { return false, nil }
func (testFacts) OwnMessageIDDomain() string                { return "agentkit.corp.test" }
func (testFacts) ProblemByMessageID(id string) (string, bool, error) {
	return "BCDFGH", id == "test.1@agentkit.corp.test", nil
}

func adviceConfig(t *testing.T, authserv ...string) *mailbot.Config {
	t.Helper()
	c := mailbot.DefaultConfig()
	c.BotAddress, c.OwnerAddresses = "bot@corp.test", []string{"me@home.test"}
	c.IMAP.Host, c.SMTP.Host = "imap.corp.test", "smtp.corp.test"
	c.TrustedAuthservIDs = authserv
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return &c
}

func testReply(from string, top ...string) []byte {
	now := time.Now()
	head := ""
	for _, h := range top {
		head += h + "\n"
	}
	return mailtest.CRLF(head + fmt.Sprintf(`From: %s
To: bot@corp.test
Subject: Re: [agentkit] BCDFGH test: does a reply from your phone reach agentkit?
Date: %s
Message-ID: <%d@home.test>
In-Reply-To: <test.1@agentkit.corp.test>
References: <test.1@agentkit.corp.test>
Content-Type: text/plain; charset=utf-8

retry

Sent from my iPhone
`, from, now.Format(time.RFC1123Z), now.UnixNano()))
}

func TestAdvise(t *testing.T) {
	d := mailtest.NewDKIM()
	sign := func(raw []byte, domain string) []byte {
		return d.Sign(t, raw, domain, "s1", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
	}
	recv := func(by string) string {
		return "Received: from mail.home.test (mail.home.test [203.0.113.9]) by " + by + " with ESMTPS id x1; " + time.Now().Format(time.RFC1123Z)
	}
	stamp := func(id string) string {
		return "Authentication-Results: " + id + "; dkim=pass header.d=home.test header.s=s1; spf=pass smtp.mailfrom=me@home.test; dmarc=pass header.from=home.test"
	}
	cases := []struct {
		name   string
		raw    []byte
		cfg    *mailbot.Config
		obeyed bool
		want   []string
	}{
		{"own DKIM", sign(testReply("Jane <me@home.test>"), "home.test"), adviceConfig(t), true,
			[]string{"replies from this phone will be obeyed (the bot verified the DKIM signature of home.test)"}},
		{"trusted provider", testReply("me@home.test", stamp("mx3.messagingengine.com"), recv("mx3.messagingengine.com")), adviceConfig(t, "*.messagingengine.com"), true,
			[]string{"replies from this phone will be obeyed (mx3.messagingengine.com vouched: dkim=pass for home.test)"}},
		{"provider's authserv-id not trusted", testReply("me@home.test", stamp("mx3.messagingengine.com"), recv("mx3.messagingengine.com")), adviceConfig(t, "mx.google.com"), false,
			[]string{"your provider stamped Authentication-Results: mx3.messagingengine.com; dkim=pass (home.test) spf=pass (home.test) dmarc=pass (home.test), but trusted_authserv_ids does not hold mx3.messagingengine.com",
				"agentkit phone setup --authserv-id *.messagingengine.com"}},
		{"exact authserv-id suggested", testReply("me@home.test", stamp("mx.corp.test"), recv("mx.corp.test")), adviceConfig(t), false,
			[]string{"agentkit phone setup --authserv-id mx.corp.test"}},
		{"received by an untrusted host", testReply("me@home.test", stamp("mx.corp.test"), recv("in12.corp-mail.test")), adviceConfig(t, "mx.corp.test"), false,
			[]string{"the topmost Received names in12.corp-mail.test, which trusted_hosts does not hold", "--trusted-host *.corp-mail.test"}},
		{"stranger", sign(testReply("Mallory <mallory@evil.test>"), "evil.test"), adviceConfig(t), false,
			[]string{"if mallory@evil.test is yours, add it to owner_addresses in phone.yaml (or run agentkit phone setup --owner me@home.test,mallory@evil.test)"}},
		{"signed by another domain", sign(testReply("me@home.test"), "mailer.test"), adviceConfig(t), false,
			[]string{"the reply was not authenticated: ", "your mail is signed by mailer.test, not by home.test", "the reply carries no Authentication-Results header"}},
		{"provider found nothing", testReply("me@home.test", "Authentication-Results: mx.corp.test; dkim=none; spf=softfail smtp.mailfrom=me@home.test", recv("mx.corp.test")), adviceConfig(t, "mx.corp.test"), false,
			[]string{"your provider (mx.corp.test) found no pass for home.test: dkim=none spf=softfail (home.test)"}},
		{"auto-reply", sign(testReply("me@home.test", "Auto-Submitted: auto-replied"), "home.test"), adviceConfig(t), false,
			[]string{"the reply was taken for automatic mail"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := mailbot.Decide(tc.raw, time.Time{}, tc.cfg, mailbot.Deps{LookupTXT: d.LookupTXT, Facts: testFacts{}})
			if err != nil {
				t.Fatal(err)
			}
			a := Advise(tc.raw, tc.cfg, v)
			all := strings.Join(a.Lines, "\n")
			if a.Obeyed != tc.obeyed {
				t.Errorf("obeyed = %v, want %v\n%s\nverdict %+v", a.Obeyed, tc.obeyed, all, v)
			}
			for _, want := range tc.want {
				if !strings.Contains(all, want) {
					t.Errorf("advice lacks %q:\n%s", want, all)
				}
			}
			if !tc.obeyed && strings.Contains(all, Obeyed) {
				t.Errorf("says obeyed:\n%s", all)
			}
		})
	}
}

// FuzzAdvise runs the verdict and the advice on arbitrary messages: no
// panic, and "obeyed" only for an authenticated verdict.
func FuzzAdvise(f *testing.F) {
	f.Add(string(testReply("me@home.test", "Authentication-Results: mx.corp.test; dkim=pass header.d=home.test", "Received: from a (a [1.2.3.4]) by mx.corp.test; Mon, 1 Jan 2026 00:00:00 +0000")))
	f.Add(string(testReply("Jane <me@home.test>", "Authentication-Results: ; dkim=pass")))
	f.Add("From: me@home.test\r\n\r\nretry\r\n")
	f.Add("Received: by\r\nAuthentication-Results: x;\r\n\r\n")
	f.Fuzz(func(t *testing.T, raw string) {
		c := mailbot.DefaultConfig()
		c.BotAddress, c.OwnerAddresses = "bot@corp.test", []string{"me@home.test"}
		c.IMAP.Host, c.SMTP.Host = "imap.corp.test", "smtp.corp.test"
		c.TrustedAuthservIDs = []string{"mx.corp.test"}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		noDNS := func(string) ([]string, error) { return nil, errors.New("no DNS in the fuzz test") }
		v, err := mailbot.Decide([]byte(raw), time.Time{}, &c, mailbot.Deps{LookupTXT: noDNS, Facts: testFacts{}})
		if err != nil {
			return
		}
		a := Advise([]byte(raw), &c, v)
		if a.Obeyed && v.Auth == nil {
			t.Fatalf("obeyed without authentication: %+v", v)
		}
		if len(a.Lines) == 0 {
			t.Fatalf("no advice for %+v", v)
		}
	})
}
