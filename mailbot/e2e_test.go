package mailbot_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
)

// parsed is a received email, read back with go-message.
type parsed struct {
	header mail.Header
	body   string
}

func parseMail(tb testing.TB, data []byte) parsed {
	tb.Helper()
	r, err := mail.CreateReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("the email does not parse: %v\n%s", err, data)
	}
	p, err := r.NextPart()
	if err != nil {
		tb.Fatal(err)
	}
	body, err := io.ReadAll(p.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return parsed{header: r.Header, body: string(body)}
}

var mailtoRE = regexp.MustCompile(`mailto:\S+`)

func TestProblemBecomesOneEmailAndSignedReplyOneDecision(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	secret := "ghp_" + strings.Repeat("A1b2", 9)
	code, err := h.store.Create(context.Background(), problems.New{
		Repo: "demo", Job: "add-login", Task: "api-tests", Kind: problems.GateFailed,
		Summary: "gate fast failed: 2 tests in ./auth",
		Detail:  "go test ./... failed the same way after two automatic retries.",
		LogTail: strings.Repeat("ok  \tdemo/other\t0.01s\n", 30) + "GITHUB_TOKEN=" + secret + "\n--- FAIL: TestLogin (0.01s)\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	eventually(t, "the problem email", func() bool { return h.mailCount() == 1 })

	m := h.smtp.received()[0]
	if m.from != botAddr || len(m.to) != 1 || m.to[0] != ownerAddr {
		t.Fatalf("envelope from %q to %q, want %s to %s", m.from, m.to, botAddr, ownerAddr)
	}
	if bytes.Contains(m.data, []byte(secret)) {
		t.Fatal("the log tail's token reached the email")
	}
	if bytes.Contains(m.data, []byte(botPassword)) {
		t.Fatal("the password reached the email")
	}
	e := parseMail(t, m.data)
	wantSubject := "[agentkit] " + string(code) + " demo: gate fast failed: 2 tests in ./auth"
	if s, _ := e.header.Subject(); s != wantSubject {
		t.Errorf("Subject %q, want %q", s, wantSubject)
	}
	mid, _ := e.header.MessageID()
	if !strings.HasSuffix(mid, "@agentkit.example.test") {
		t.Errorf("Message-ID %q is not under the bot's domain", mid)
	}
	var stored string
	if err := h.db.QueryRow("SELECT message_id FROM outbox WHERE kind = 'problem'").Scan(&stored); err != nil || stored != mid {
		t.Errorf("stored Message-ID %q (%v), sent %q", stored, err, mid)
	}
	for k, want := range map[string]string{"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All", "To": ownerAddr} {
		if got := e.header.Get(k); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if e.header.Get("Reply-To") != "" {
		t.Error("the email has a Reply-To")
	}
	if d, err := e.header.Date(); err != nil || d.IsZero() {
		t.Errorf("Date %q: %v", e.header.Get("Date"), err)
	}
	if ct, params, _ := e.header.ContentType(); ct != "text/plain" || !strings.EqualFold(params["charset"], "utf-8") {
		t.Errorf("Content-Type %s %v", ct, params)
	}
	body := e.body
	for _, want := range []string{"Reply with one of:", "gate fast failed", "--- FAIL: TestLogin", "GITHUB_TOKEN=[redacted]",
		"obeys replies only from " + ownerAddr, "DKIM or SPF"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, "ok  ") + strings.Count(body, "GITHUB_TOKEN") + strings.Count(body, "--- FAIL"); n > mailbot.MaxLogLines {
		t.Errorf("the body quotes %d log lines, over %d", n, mailbot.MaxLogLines)
	}
	p, _ := h.store.Get(context.Background(), code)
	links := mailtoRE.FindAllString(body, -1)
	if len(links) != len(p.Replies) {
		t.Fatalf("%d mailto links for %d replies:\n%s", len(links), len(p.Replies), body)
	}
	for i, v := range p.Replies {
		if !strings.Contains(body, v.Meaning()) {
			t.Errorf("the body lacks the meaning of %s", v)
		}
		u, err := url.Parse(links[i])
		if err != nil {
			t.Fatal(err)
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			t.Fatal(err)
		}
		if u.Opaque != botAddr || q.Get("subject") != "Re: "+wantSubject {
			t.Errorf("link %d goes to %q with subject %q", i, u.Opaque, q.Get("subject"))
		}
		want := string(v)
		if v.TakesWords() {
			want += " "
		}
		if q.Get("body") != want {
			t.Errorf("link for %s has body %q", v, q.Get("body"))
		}
		if strings.Contains(u.RawQuery, "+") {
			t.Errorf("link %q encodes a space as +", links[i])
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if n := len([]rune(line)); n > 80 && !strings.Contains(line, "mailto:") && !strings.Contains(line, "ok  ") {
			t.Errorf("a %d-character line is wide for a phone: %q", n, line)
		}
	}

	// The owner replies "retry" from the phone: one decision.
	uid := h.imap.appendRaw(t, h.answerTo(t, code, mid, "Retry"))
	eventually(t, "the decision", func() bool { return h.decision(code) != nil })
	d := h.decision(code)
	if d.Reply != problems.Retry || d.Channel != problems.Email || d.Who != ownerAddr || d.SourceID == "" {
		t.Errorf("decision %+v", d)
	}
	eventually(t, "the reply marked on the server", func() bool {
		f := h.imap.flags(t, h.pki)[uid]
		return hasFlag(f, imap.FlagSeen) && hasFlag(f, imap.Flag(h.cfg.ProcessedKeyword))
	})
	log, err := mailbot.RecentVerdicts(context.Background(), h.db, 10)
	if err != nil || len(log) != 1 || log[0].Outcome != "obeyed" || log[0].Code != code || len(log[0].Verdict) == 0 {
		t.Fatalf("phone log %+v, %v", log, err)
	}
	if n := h.count("SELECT count(*) FROM decisions"); n != 1 {
		t.Fatalf("%d decisions", n)
	}
	if h.mailCount() != 1 {
		t.Fatalf("%d emails before the decision was applied", h.mailCount())
	}

	// The supervisor applies it: the confirmation arrives, in the thread.
	if err := h.store.MarkApplied(context.Background(), d.ID, "retried: the gate passed"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the confirmation", func() bool { return h.mailCount() == 2 })
	c := parseMail(t, h.smtp.received()[1].data)
	if s, _ := c.header.Subject(); s != "Re: "+wantSubject {
		t.Errorf("confirmation subject %q", s)
	}
	irt, _ := c.header.MsgIDList("In-Reply-To")
	refs, _ := c.header.MsgIDList("References")
	if len(irt) != 1 || irt[0] != d.SourceID || len(refs) != 2 || refs[0] != mid || refs[1] != d.SourceID {
		t.Errorf("confirmation In-Reply-To %v References %v; want the reply %s under the problem %s", irt, refs, d.SourceID, mid)
	}
	for _, want := range []string{"Done: problem " + string(code), "Reply: retry", "retried: the gate passed"} {
		if !strings.Contains(c.body, want) {
			t.Errorf("the confirmation lacks %q:\n%s", want, c.body)
		}
	}
	if c.header.Get("Auto-Submitted") != "auto-generated" {
		t.Error("the confirmation is not marked auto-generated")
	}
	if got := h.settle(); got.Sent != 0 {
		t.Fatalf("a later pass sent %d more", got.Sent)
	}
	if h.mailCount() != 2 {
		t.Fatalf("%d emails in all, want the problem email and one confirmation", h.mailCount())
	}
}

func TestForgedRepliesChangeNothingAndGetNoEmail(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	subject := "Re: [agentkit] " + string(code) + " demo: gate failed"
	forged := map[string][]byte{
		// The owner's address, no signature at all.
		"unsigned": h.reply(t, replyOpts{subject: subject, inReplyTo: mid, body: "retry", unsigned: true}),
		// Signed by owner.test, but From is a stranger.
		"stranger": h.reply(t, replyOpts{from: "Mallory <mallory@evil.test>", subject: subject, inReplyTo: mid, body: "retry"}),
		// The owner's display name on a stranger's address.
		"display name": h.reply(t, replyOpts{from: `"` + ownerAddr + `" <mallory@evil.test>`, subject: subject, inReplyTo: mid, body: "retry", unsigned: true}),
		// A forged Authentication-Results with no inbound Received header.
		"forged authres": h.reply(t, replyOpts{subject: subject, inReplyTo: mid, body: "retry", unsigned: true,
			extra: []string{"Authentication-Results: mx.example.test; dkim=pass header.d=owner.test; spf=pass smtp.mailfrom=owner.test"}}),
	}
	// A genuine signature over a body changed afterwards.
	genuine := h.reply(t, replyOpts{subject: subject, inReplyTo: mid, body: "skip"})
	forged["changed body"] = bytes.Replace(genuine, []byte("\r\n\r\nskip"), []byte("\r\n\r\nretry"), 1)
	for _, raw := range forged {
		h.imap.appendRaw(t, raw)
	}
	eventually(t, "every forged message judged", func() bool { return h.count("SELECT count(*) FROM inbound") == len(forged) })
	if n := h.count("SELECT count(*) FROM inbound WHERE outcome <> 'refused'"); n != 0 {
		log, _ := mailbot.RecentVerdicts(context.Background(), h.db, 10)
		t.Fatalf("%d forged messages were not refused: %+v", n, log)
	}
	if d := h.decision(code); d != nil {
		t.Fatalf("a forged reply made decision %+v", d)
	}
	if n := h.count("SELECT count(*) FROM processed"); n != 0 {
		t.Fatalf("%d unauthenticated messages remembered as processed", n)
	}
	if n := h.count("SELECT count(*) FROM outbox WHERE kind <> 'problem'"); n != 0 {
		t.Fatalf("forged replies owed %d emails", n)
	}
	if got := h.settle(); got.Sent != 0 || h.mailCount() != 1 {
		t.Fatalf("sent %d more; %d emails in all, want only the problem email", got.Sent, h.mailCount())
	}
	// The genuine reply still works afterwards (and is not a replay).
	h.imap.appendRaw(t, h.answerTo(t, code, mid, "skip"))
	eventually(t, "the genuine decision", func() bool { return h.decision(code) != nil })
	if d := h.decision(code); d.Reply != problems.Skip {
		t.Fatalf("decision %+v", d)
	}
}
