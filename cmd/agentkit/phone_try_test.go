package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/internal/phonesetup"
)

// ownerReply answers the test email as the owner's phone would.
func ownerReply(m phonesetup.TestMail, from string, top ...string) []byte {
	subject := strings.SplitN(string(m.Raw), "Subject: ", 2)[1]
	subject = subject[:strings.Index(subject, "\r\n")]
	now := time.Now()
	var b strings.Builder
	for _, h := range top {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "From: %s\nTo: %s\nSubject: Re: %s\nDate: %s\nMessage-ID: <%d.iphone@home.test>\nIn-Reply-To: <%s>\nReferences: <%s>\nContent-Type: text/plain; charset=us-ascii\n\nRetry\n\nSent from my iPhone\n\n> On %s, agentkit <%s> wrote:\n> This is a test from agentkit phone test\n",
		from, testBot, subject, now.Format(time.RFC1123Z), now.UnixNano(), m.MessageID, m.MessageID, now.Format("2 Jan 2006"), testBot)
	return mailtest.CRLF(b.String())
}

func (w *phoneWorld) runTest(args []string, opts func(*phoneTestOptions)) (string, error) {
	w.t.Helper()
	var o *phoneTestOptions
	cmd := newCmdPhoneTest(w.ios(""), func(x *phoneTestOptions) error { o = x; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return "", err
	}
	o.deps = w.deps(nil)
	opts(o)
	err := phoneTestRun(context.Background(), o)
	return w.out.String(), err
}

func TestPhoneTestObeyed(t *testing.T) {
	w, _, d := checkWorld(t)
	w.env["AGENTKIT_PHONE_PASSWORD"] = testPassword
	var mail phonesetup.TestMail
	out, err := w.runTest([]string{"--wait", "--timeout", "1m"}, func(o *phoneTestOptions) {
		o.lookupTXT = d.LookupTXT
		o.sent = func(m phonesetup.TestMail) {
			mail = m
			raw := d.Sign(t, ownerReply(m, "Jane Doe <me@home.test>"), "home.test", "sel", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
			go w.imap.Append(t, testBot, raw, time.Now())
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := w.smtp.Messages()
	if len(got) != 1 || got[0].To[0] != "me@home.test" || got[0].From != testBot || !strings.Contains(string(got[0].Data), "Subject: [agentkit] "+mail.Code+" test: will replies from your phone be obeyed?") {
		t.Fatalf("sent: %+v", got)
	}
	for _, want := range []string{
		"Sent a test email to me@home.test with code " + mail.Code + ". Reply to it from your phone with the word: retry",
		"Waiting up to 1m0s for your reply...",
		"Your reply arrived.",
		"✓ from       From me@home.test is an owner address",
		"✓ dkim       DKIM signature by home.test (selector sel) verified, aligned with home.test",
		"✓ code       code " + mail.Code + " from the ",
		"✓ problem    the test's code",
		"command    retry",
		"Replies from this phone will be obeyed (the bot verified the DKIM signature of home.test).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, testPassword) {
		t.Error("the password was printed")
	}
}

func TestPhoneTestNotObeyedSaysWhichSetting(t *testing.T) {
	w, _, d := checkWorld(t) // trusts mx.corp.test only
	w.env["AGENTKIT_PHONE_PASSWORD"] = testPassword
	out, err := w.runTest([]string{"--wait"}, func(o *phoneTestOptions) {
		o.lookupTXT = d.LookupTXT
		o.sent = func(m phonesetup.TestMail) {
			// No DKIM; the provider vouches under a name not trusted yet.
			raw := ownerReply(m, "me@home.test",
				"Authentication-Results: mx7.mail.corp.test; dkim=pass header.d=home.test; spf=pass smtp.mailfrom=me@home.test",
				"Received: from out.home.test (out.home.test [203.0.113.7]) by mx7.mail.corp.test with ESMTPS; "+time.Now().Format(time.RFC1123Z))
			w.imap.Append(t, testBot, raw, time.Now())
		}
	})
	if err == nil || !strings.Contains(err.Error(), "would not be obeyed yet") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	for _, want := range []string{
		"✗ dkim       the message has no DKIM signature",
		"found      Authentication-Results: mx7.mail.corp.test (not trusted): dkim=pass (home.test) spf=pass (home.test)",
		"The reply was not authenticated: ",
		"Your provider stamped Authentication-Results: mx7.mail.corp.test",
		"agentkit phone setup --authserv-id *.mail.corp.test",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, phonesetup.Obeyed) {
		t.Errorf("says obeyed:\n%s", out)
	}
}

func TestPhoneTestPollingJSONAndTimeout(t *testing.T) {
	w := newPhoneWorld(t)
	// A mailbox without IDLE is polled.
	cert := mailtest.CertOptions{Names: []string{"imap.corp.test", "127.0.0.1"}}
	w.imap = mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: w.ca.ServerTLS(t, cert), NoIdle: true, Users: map[string]string{testBot: testPassword}})
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--no-verify"}, w.serverFlags()...)
	if err := w.setup(w.deps(nil), testPassword, args...); err != nil {
		t.Fatal(err)
	}
	w.env["AGENTKIT_PHONE_PASSWORD"] = testPassword
	d := mailtest.NewDKIM()
	out, err := w.runTest([]string{"--wait", "--json"}, func(o *phoneTestOptions) {
		o.poll = 20 * time.Millisecond
		o.lookupTXT = d.LookupTXT
		o.sent = func(m phonesetup.TestMail) {
			go func() {
				// Someone else's mail first: it is passed over.
				w.imap.Append(t, testBot, mailtest.CRLF("From: x@y.test\nSubject: hello\n\nhi\n"), time.Now())
				w.imap.Append(t, testBot, d.Sign(t, ownerReply(m, "me@home.test"), "home.test", "s", "From", "Subject", "Date", "Message-ID", "In-Reply-To", "References"), time.Now())
			}()
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, w.err.String())
	}
	var res testResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !res.Advice.Obeyed || !res.Verdict.Obeyed || res.Verdict.Auth == nil || res.Verdict.Auth.Domain != "home.test" || res.Code == "" {
		t.Errorf("json: %+v", res)
	}
	if !strings.Contains(w.err.String(), "Sent a test email") {
		t.Errorf("progress not on stderr: %q", w.err.String())
	}

	out, err = w.runTest([]string{"--wait", "--timeout", "200ms"}, func(o *phoneTestOptions) { o.poll = 20 * time.Millisecond })
	if err == nil || !strings.Contains(err.Error(), "no reply within 200ms; check that the test email reached me@home.test") {
		t.Errorf("timeout: %v\n%s", err, out)
	}

	// Without --wait it only sends.
	before := len(w.smtp.Messages())
	out, err = w.runTest(nil, func(*phoneTestOptions) {})
	if err != nil || !strings.Contains(out, "Run agentkit phone test --wait") || len(w.smtp.Messages()) != before+1 {
		t.Errorf("no wait: %v\n%s", err, out)
	}

	delete(w.env, "AGENTKIT_PHONE_PASSWORD")
	if _, err := w.runTest(nil, func(*phoneTestOptions) {}); err == nil || !strings.Contains(err.Error(), "no phone password") {
		t.Errorf("no password: %v", err)
	}
}
