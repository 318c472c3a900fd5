package mailbot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
)

// answerFor sends the owner's signed message and returns the bot's answer.
func (h *harness) answerFor(t *testing.T, subject, body, inReplyTo string) parsed {
	t.Helper()
	before := h.mailCount()
	mid := newMessageID()
	h.imap.appendRaw(t, h.reply(t, replyOpts{subject: subject, body: body, inReplyTo: inReplyTo, messageID: mid}))
	eventually(t, "the answer to "+body, func() bool { return h.mailCount() == before+1 })
	m := h.smtp.received()[before]
	if len(m.to) != 1 || m.to[0] != ownerAddr {
		t.Fatalf("the answer went to %v", m.to)
	}
	e := parseMail(t, m.data)
	if irt, _ := e.header.MsgIDList("In-Reply-To"); len(irt) != 1 || irt[0] != mid {
		t.Errorf("the answer is not threaded under the message: In-Reply-To %v", irt)
	}
	if e.header.Get("Auto-Submitted") != "auto-generated" {
		t.Error("the answer is not marked auto-generated")
	}
	return e
}

func TestControlCommandsByEmail(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code := h.newProblem("gate failed on login")
	h.start()
	h.problemMessageID(code)

	st := h.answerFor(t, "status", "status", "")
	for _, want := range []string{"demo: 1 open problem", string(code) + " demo: gate failed on login", "reply: retry, hint <words>"} {
		if !strings.Contains(st.body, want) {
			t.Errorf("the status answer lacks %q:\n%s", want, st.body)
		}
	}
	if s, _ := st.header.Subject(); s != "Re: status" {
		t.Errorf("status answer subject %q", s)
	}

	pa := h.answerFor(t, "pause", "pause demo\n\nSent from my iPhone", "")
	if !strings.Contains(pa.body, "Paused demo") {
		t.Errorf("pause answer:\n%s", pa.body)
	}
	p, err := h.store.Paused(context.Background(), "demo")
	if err != nil || !p.Paused || p.Who != ownerAddr || p.Channel != problems.Email {
		t.Fatalf("pause state %+v, %v", p, err)
	}
	st = h.answerFor(t, "status", "status", "")
	if !strings.Contains(st.body, "demo: 1 open problem, paused") {
		t.Errorf("the status does not show the pause:\n%s", st.body)
	}
	re := h.answerFor(t, "Re: pause", "resume", "")
	if !strings.Contains(re.body, "Resumed every repository") {
		t.Errorf("resume answer:\n%s", re.body)
	}
	if p, _ := h.store.Paused(context.Background(), "demo"); p.Paused {
		t.Fatal("still paused after resume")
	}

	bad := h.answerFor(t, "pause", "pause nosuchrepo", "")
	if !strings.Contains(bad.body, `No repository is named "nosuchrepo"`) || !strings.Contains(bad.body, "Nothing was done") {
		t.Errorf("answer to an unknown repository:\n%s", bad.body)
	}
	help := h.answerFor(t, "help", "help", "")
	if !strings.Contains(help.body, "pause [repo]") || !strings.Contains(help.body, "limited to 10 an hour") {
		t.Errorf("help answer:\n%s", help.body)
	}
	log, _ := mailbot.RecentVerdicts(context.Background(), h.db, 10)
	if len(log) != 6 || log[0].Outcome != "obeyed" || log[1].Outcome != "answered" {
		t.Fatalf("phone log: %+v", log)
	}
}

func TestRefusedButAuthenticatedRepliesAreAnswered(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code := h.newProblem("gate failed")
	answered := h.newProblem("already answered")
	h.start()
	mid := h.problemMessageID(code)
	amid := h.problemMessageID(answered)
	if _, err := h.store.Answer(context.Background(), answered, problems.Answer{Reply: problems.Reply{Verb: problems.Skip}, Channel: problems.Terminal, Who: "owner at the desk"}); err != nil {
		t.Fatal(err)
	}
	subject := "Re: [agentkit] " + string(code) + " demo: gate failed"

	notOffered := h.answerFor(t, subject, "accept", mid)
	for _, want := range []string{"cannot be fixed by accept", "Reply with one of: retry, hint <words>, skip, plan <words>"} {
		if !strings.Contains(notOffered.body, want) {
			t.Errorf("answer to a reply not offered lacks %q:\n%s", want, notOffered.body)
		}
	}
	if s, _ := notOffered.header.Subject(); s != subject {
		t.Errorf("answer subject %q", s)
	}
	closed := h.answerFor(t, "Re: [agentkit] "+string(answered)+" demo: already answered", "retry", amid)
	if !strings.Contains(closed.body, "was already answered \"skip\" by owner at the desk") {
		t.Errorf("answer to a closed problem:\n%s", closed.body)
	}
	noCode := h.answerFor(t, "about the build", "retry", "")
	if !strings.Contains(noCode.body, "needs a problem code") {
		t.Errorf("answer to a reply without a code:\n%s", noCode.body)
	}
	if d := h.decision(code); d != nil {
		t.Fatalf("a refused reply made decision %+v", d)
	}
	if n := h.count("SELECT count(*) FROM decisions"); n != 1 {
		t.Fatalf("%d decisions, want only the terminal's", n)
	}
	// The refused messages are remembered: sending one again does nothing.
	n := h.mailCount()
	raw := h.reply(t, replyOpts{subject: subject, body: "accept", inReplyTo: mid, messageID: "again@mail.owner.test"})
	h.imap.appendRaw(t, raw)
	eventually(t, "the first copy answered", func() bool { return h.mailCount() == n+1 })
	h.imap.appendRaw(t, h.reply(t, replyOpts{subject: subject, body: "retry", inReplyTo: mid, messageID: "again@mail.owner.test"}))
	eventually(t, "the replay judged", func() bool {
		return h.count("SELECT count(*) FROM inbound WHERE message_id = 'again@mail.owner.test'") == 2
	})
	if h.settle(); h.mailCount() != n+1 || h.decision(code) != nil {
		t.Fatalf("a replayed Message-ID acted or was answered (%d emails)", h.mailCount())
	}
}

func TestAnswersHeldWhilePhoneIsOff(t *testing.T) {
	h := newHarness(t, harnessOptions{phoneOff: true})
	h.start()
	h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "status", body: "status"}))
	eventually(t, "the answer owed", func() bool { return h.count("SELECT count(*) FROM outbox WHERE kind = 'answer'") == 1 })
	if h.settle(); h.mailCount() != 0 {
		t.Fatal("mail went out while the phone channel is off")
	}
	sum, _ := mailbot.ReadOutbox(context.Background(), h.db, 0)
	if sum.Held != 1 || len(sum.Entries) != 1 || sum.Entries[0].State != "held" {
		t.Fatalf("outbox %+v", sum)
	}
	if _, err := h.store.ReleaseHeld(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the released answer", func() bool { return h.mailCount() == 1 })
}
