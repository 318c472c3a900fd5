package mailbot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
)

func TestIMAPDroppedDuringIdleCatchesUpAfterReconnect(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	eventually(t, "IDLE running", func() bool { return h.imap.idleCount() >= 1 })

	// The network goes away while IDLE runs; a reply arrives meanwhile.
	h.imap.ln.setDown(true)
	eventually(t, "the outage noticed", func() bool { return h.logs.count("the mailbox cannot be read") == 1 })
	uid := h.imap.appendRaw(t, h.answerTo(t, code, mid, "retry"))
	// Several reconnects fail while it is down.
	eventually(t, "reconnects failing", func() bool { return h.logs.count("the mailbox still cannot be read") >= 3 })
	states, err := mailbot.MailboxStates(context.Background(), h.db)
	if err != nil || len(states) != 1 || !states[0].Unreachable || states[0].LastError == "" {
		t.Fatalf("mailbox state during the outage: %+v, %v", states, err)
	}
	if h.decision(code) != nil {
		t.Fatal("decided while the mailbox was unreachable")
	}

	h.imap.ln.setDown(false)
	eventually(t, "the decision after the reconnect", func() bool { return h.decision(code) != nil })
	eventually(t, "the reply marked", func() bool { return hasFlag(h.imap.flags(t, h.pki)[uid], imap.FlagSeen) })
	if n := h.logs.count("level=WARN", "the mailbox cannot be read"); n != 1 {
		t.Errorf("the outage was logged %d times at WARN, want once:\n%s", n, h.logs)
	}
	// The recovery is logged and stored once the session is back in IDLE,
	// which may come just after the reply is marked.
	eventually(t, "the recovery logged", func() bool { return h.logs.count("the mailbox is reachable again") >= 1 })
	if n := h.logs.count("the mailbox is reachable again"); n != 1 {
		t.Errorf("the recovery was logged %d times, want once:\n%s", n, h.logs)
	}
	eventually(t, "the mailbox state after the reconnect", func() bool {
		states, _ = mailbot.MailboxStates(context.Background(), h.db)
		return len(states) == 1 && !states[0].Unreachable && states[0].IdleInUse && states[0].LastUID == uint32(uid)
	})
}

func TestIdleIsRestartedAndStillDelivers(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.idleRestart = 20 * time.Millisecond
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	eventually(t, "IDLE restarted several times", func() bool { return h.imap.idleCount() >= 5 })
	h.imap.appendRaw(t, h.answerTo(t, code, mid, "skip"))
	eventually(t, "the decision", func() bool { return h.decision(code) != nil })
	if h.logs.count("the mailbox cannot be read") != 0 {
		t.Fatalf("restarting IDLE broke the connection:\n%s", h.logs)
	}
}

func TestPollingWhenIdleIsMissing(t *testing.T) {
	h := newHarness(t, harnessOptions{imap: &imapMode{idle: false}})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	eventually(t, "the mailbox reached", func() bool {
		s, _ := mailbot.MailboxStates(context.Background(), h.db)
		return len(s) == 1 && !s[0].LastReached.IsZero()
	})
	states, _ := mailbot.MailboxStates(context.Background(), h.db)
	if states[0].IdleInUse {
		t.Fatal("IDLE reported in use on a server without it")
	}
	h.imap.appendRaw(t, h.answerTo(t, code, mid, "retry"))
	// A poll comes every poll_interval (5s at least); a wake-up asks for one now.
	h.bot.Wake()
	eventually(t, "the decision by polling", func() bool { return h.decision(code) != nil })
	if h.imap.idleCount() != 0 {
		t.Fatal("IDLE was sent to a server that does not offer it")
	}
}

func TestStartTLSBothWays(t *testing.T) {
	h := newHarness(t, harnessOptions{imap: &imapMode{idle: true, starttls: true}, smtpStartTLS: true})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	h.imap.appendRaw(t, h.answerTo(t, code, mid, "retry"))
	eventually(t, "the decision over STARTTLS", func() bool { return h.decision(code) != nil })
}

func TestSMTPTemporaryFailuresRetriedPermanentRecorded(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	// The first problem meets 421, then 451, then is accepted; the second is refused with 550.
	h.smtp.setRespond(func(n int, data []byte) error {
		switch {
		case strings.Contains(string(data), "second problem"):
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "owner@owner.test: no such mailbox"}
		case n == 0:
			return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "Service shutting down"}
		case n == 1:
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
		}
		return nil
	})
	first := h.newProblem("first problem")
	h.start()
	eventually(t, "the 421", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE last_error LIKE '421 4.3.2%' AND attempts = 1 AND state = 'pending'") == 1
	})
	var firstMID string
	h.db.QueryRow("SELECT message_id FROM outbox WHERE id = 1").Scan(&firstMID)
	attempts := func() int { return h.count("SELECT attempts FROM outbox WHERE id = 1") }
	// Nothing is retried before the backoff ends, however often the sender looks.
	h.deliverDue()
	if n := attempts(); n != 1 || h.mailCount() != 0 {
		t.Fatalf("retried before the backoff: %d attempts", n)
	}
	h.clock.Advance(31 * time.Second)
	h.bot.Wake()
	eventually(t, "the retry meeting 451", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE last_error = '451 4.3.0 Try again later' AND attempts = 2") == 1
	})
	h.clock.Advance(59 * time.Second)
	h.deliverDue()
	if n := attempts(); n != 2 || h.mailCount() != 0 {
		t.Fatalf("sent before the second (doubled) backoff ended: %d attempts", n)
	}
	h.clock.Advance(2 * time.Second)
	h.bot.Wake()
	eventually(t, "the email after the second backoff", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE state = 'sent'") == 1
	})
	mails := h.smtp.received()
	if len(mails) != 1 || !strings.Contains(string(mails[0].data), "<"+firstMID+">") {
		t.Fatalf("the retried email changed identity or was not received: %d mails", len(mails))
	}
	if n := h.count("SELECT count(*) FROM outbox WHERE state = 'sent' AND attempts = 3 AND last_error = ''"); n != 1 {
		t.Fatal("the delivered row is not recorded as sent after 3 attempts")
	}
	_ = first

	h.newProblem("second problem")
	eventually(t, "the 550 recorded", func() bool { return h.count("SELECT count(*) FROM outbox WHERE state = 'failed'") == 1 })
	sum, err := mailbot.ReadOutbox(context.Background(), h.db, 5)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || sum.Sent != 1 || sum.Waiting != 0 {
		t.Fatalf("outbox summary %+v", sum)
	}
	var failed mailbot.OutboxEntry
	for _, e := range sum.Entries {
		if e.State == "failed" {
			failed = e
		}
	}
	if failed.LastError != "550 5.1.1 owner@owner.test: no such mailbox" || failed.Code == "" {
		t.Fatalf("the failure shown is %+v", failed)
	}
	h.clock.Advance(24 * time.Hour)
	if d := h.settle(); d.Sent+d.Retried+d.Failed != 0 {
		t.Fatalf("a permanently refused email was tried again: %+v", d)
	}
}

func TestSMTPUnreachableHoldsMailWithoutLosingIt(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.smtp.ln.setDown(true)
	code := h.newProblem("gate failed")
	h.start()
	eventually(t, "the outage recorded on the row", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE state = 'pending' AND last_error <> '' AND attempts = 0") == 1
	})
	h.stop() // a restart in the middle of the outage
	h.smtp.ln.setDown(false)
	h.start()
	if d := h.deliverDue(); d.Sent != 0 {
		t.Fatalf("sent before the backoff ended: %+v", d)
	}
	h.clock.Advance(31 * time.Second)
	h.bot.Wake()
	eventually(t, "the email after the restart", func() bool { return h.mailCount() == 1 })
	e := parseMail(t, h.smtp.received()[0].data)
	if s, _ := e.header.Subject(); !strings.Contains(s, string(code)) {
		t.Fatalf("subject %q", s)
	}
}

func TestCertificateIsVerified(t *testing.T) {
	other := newPKI(t) // a CA the servers' certificates do not chain to
	h := newHarness(t, harnessOptions{configure: func(c *mailbot.Config) {
		c.SMTP.CAFile, c.IMAP.CAFile = other.caFile, other.caFile
	}})
	h.newProblem("gate failed")
	h.start()
	eventually(t, "the refused certificate recorded", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE last_error LIKE '%certificate%'") == 1
	})
	eventually(t, "the IMAP certificate refused", func() bool {
		s, _ := mailbot.MailboxStates(context.Background(), h.db)
		return len(s) == 1 && strings.Contains(s[0].LastError, "certificate")
	})
	if h.mailCount() != 0 || len(h.smtp.logins) != 0 {
		t.Fatal("mail or a login went to a server whose certificate does not verify")
	}
}

func TestStopBetweenStoringAndMarkingAppliesOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	h.stop()

	// The process dies right after the decision is committed, before the
	// message is flagged.
	var once sync.Once
	stopped := make(chan struct{})
	h.hook = func(uint32) { once.Do(func() { h.cancel(); close(stopped) }) }
	h.start()
	uid := h.imap.appendRaw(t, h.answerTo(t, code, mid, "hint use the v2 API"))
	<-stopped
	h.stop()
	if d := h.decision(code); d == nil || d.Words != "use the v2 API" {
		t.Fatalf("decision before the crash: %+v", d)
	}
	if f := h.imap.flags(t, h.pki)[uid]; hasFlag(f, imap.FlagSeen) {
		t.Fatal("the message was marked although the process stopped before marking")
	}

	// The restart finds the stored message: it only marks it.
	h.hook = nil
	h.start()
	eventually(t, "the message marked after the restart", func() bool {
		f := h.imap.flags(t, h.pki)[uid]
		return hasFlag(f, imap.FlagSeen) && hasFlag(f, imap.Flag(h.cfg.ProcessedKeyword))
	})
	eventually(t, "the UID recorded", func() bool {
		s, _ := mailbot.MailboxStates(context.Background(), h.db)
		return len(s) == 1 && s[0].LastUID == uint32(uid)
	})
	if n := h.count("SELECT count(*) FROM decisions"); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
	if n := h.count("SELECT count(*) FROM inbound"); n != 1 {
		t.Fatalf("%d phone-log rows, want 1", n)
	}
	if n := h.count("SELECT count(*) FROM outbox WHERE kind = 'answer'"); n != 0 {
		t.Fatalf("the restart owed %d answers (a replay refusal would be silent, a decision none)", n)
	}
}

func TestUIDValidityChangeRescansWithoutRepeating(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code1, code2 := h.newProblem("first"), h.newProblem("second")
	h.start()
	mid1, mid2 := h.problemMessageID(code1), h.problemMessageID(code2)
	reply1 := h.answerTo(t, code1, mid1, "retry")
	forged := h.reply(t, replyOpts{subject: "Re: [agentkit] " + string(code2) + " demo", inReplyTo: mid2, body: "skip", unsigned: true})
	h.imap.appendRaw(t, reply1)
	h.imap.appendRaw(t, forged)
	eventually(t, "both judged", func() bool { return h.count("SELECT count(*) FROM inbound") == 2 })

	// The provider rebuilds the mailbox: same messages, new UIDs, new UIDVALIDITY.
	h.imap.ln.setDown(true)
	if err := h.imap.user.Delete("INBOX"); err != nil {
		t.Fatal(err)
	}
	if err := h.imap.user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	h.imap.appendRaw(t, reply1)
	h.imap.appendRaw(t, forged)
	uid3 := h.imap.appendRaw(t, h.answerTo(t, code2, mid2, "skip"))
	h.imap.ln.setDown(false)

	eventually(t, "the new reply decided", func() bool { return h.decision(code2) != nil })
	eventually(t, "every message marked in the new mailbox", func() bool {
		fs := h.imap.flags(t, h.pki)
		for uid := imap.UID(1); uid <= uid3; uid++ {
			if !hasFlag(fs[uid], imap.FlagSeen) {
				return false
			}
		}
		return len(fs) == 3
	})
	if n := h.count("SELECT count(*) FROM decisions"); n != 2 {
		t.Fatalf("%d decisions, want 2", n)
	}
	if n := h.count("SELECT count(*) FROM inbound"); n != 3 {
		t.Fatalf("%d phone-log rows, want 3 (the copies are recognised, not judged again)", n)
	}
	if h.logs.count("UIDVALIDITY changed") != 1 {
		t.Errorf("the UIDVALIDITY change was not logged once:\n%s", h.logs)
	}
	if d := h.decision(code1); d.Reply != problems.Retry {
		t.Fatalf("decision 1 %+v", d)
	}
}

func TestOversizeMessageRefusedWithoutDownload(t *testing.T) {
	h := newHarness(t, harnessOptions{configure: func(c *mailbot.Config) { c.MaxMessageBytes = 4096 }})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	big := h.answerTo(t, code, mid, "retry\n\n"+strings.Repeat("padding line of an oversized reply\n", 400))
	small := h.answerTo(t, code, mid, "skip")
	bigUID := h.imap.appendRaw(t, big)
	smallUID := h.imap.appendRaw(t, small)
	eventually(t, "both judged", func() bool { return h.count("SELECT count(*) FROM inbound") == 2 })
	if h.imap.downloaded(bigUID) {
		t.Fatal("the oversized message was downloaded")
	}
	if !h.imap.downloaded(smallUID) {
		t.Fatal("the small message was not downloaded: the spy is blind")
	}
	log, _ := mailbot.RecentVerdicts(context.Background(), h.db, 5)
	var bigEntry mailbot.LogEntry
	for _, e := range log {
		if e.Size > 4096 {
			bigEntry = e
		}
	}
	if bigEntry.Outcome != "refused" || !strings.Contains(bigEntry.Reason, "too large") || bigEntry.From != ownerAddr || bigEntry.MessageID == "" {
		t.Fatalf("the oversized message's log entry: %+v", bigEntry)
	}
	if d := h.decision(code); d == nil || d.Reply != problems.Skip {
		t.Fatalf("decision %+v, want the small reply's skip", d)
	}
	eventually(t, "the oversized message marked", func() bool { return hasFlag(h.imap.flags(t, h.pki)[bigUID], imap.FlagSeen) })
}

func TestAnswersCappedPerHourProblemEmailsStillGo(t *testing.T) {
	h := newHarness(t, harnessOptions{configure: func(c *mailbot.Config) { c.AnswersPerHour = 2 }})
	h.start()
	for range 4 {
		h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "help", body: "help"}))
	}
	eventually(t, "four answers owed", func() bool { return h.count("SELECT count(*) FROM outbox WHERE kind = 'answer'") == 4 })
	eventually(t, "two answers sent, two held by the cap", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE kind = 'answer' AND state = 'sent'") == 2 &&
			h.count("SELECT count(*) FROM outbox WHERE kind = 'answer' AND state = 'pending' AND last_error LIKE 'waiting: 2 automatic answers%'") == 2
	})
	code := h.newProblem("gate failed while answers wait")
	h.problemMessageID(code) // the problem email is not capped
	for _, d := range []mailbot.Delivery{h.deliverDue(), h.settle()} {
		// the held answers wait for their slot, even when sending is forced
		if d.Sent != 0 {
			t.Fatalf("a pass within the hour: %+v", d)
		}
	}
	if n := h.count("SELECT count(*) FROM outbox WHERE kind = 'answer' AND state = 'sent'"); n != 2 {
		t.Fatalf("%d answers sent within the hour, cap 2", n)
	}
	h.clock.Advance(time.Hour + time.Second)
	h.bot.Wake()
	eventually(t, "the held answers sent after the hour", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE kind = 'answer' AND state = 'sent'") == 4
	})
	for _, m := range h.smtp.received() {
		e := parseMail(t, m.data)
		if s, _ := e.header.Subject(); strings.HasPrefix(s, "Re: help") && !strings.Contains(e.body, "limited to 2 an hour") {
			t.Errorf("the help answer does not state the cap:\n%s", e.body)
		}
	}
}

func TestReplayInTheSameBatchActsOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{phoneOff: true})
	code := h.newProblem("gate failed")
	// Both copies wait in the mailbox before the bot starts, so they are
	// decided in one batch and stored in one transaction.
	raw := h.reply(t, replyOpts{subject: "Re: [agentkit] " + string(code) + " demo: gate failed", body: "retry"})
	h.imap.appendRaw(t, raw)
	h.imap.appendRaw(t, raw)
	h.start()
	eventually(t, "both copies judged", func() bool { return h.count("SELECT count(*) FROM inbound") == 2 })
	if n := h.count("SELECT count(*) FROM decisions"); n != 1 {
		t.Fatalf("%d decisions from one reply delivered twice", n)
	}
	if n := h.count("SELECT count(*) FROM inbound WHERE outcome = 'refused' AND reason LIKE 'replayed%'"); n != 1 {
		log, _ := mailbot.RecentVerdicts(context.Background(), h.db, 5)
		t.Fatalf("the second copy was not refused as a replay: %+v", log)
	}
	if n := h.count("SELECT count(*) FROM outbox WHERE kind = 'answer'"); n != 0 {
		t.Fatalf("a replay owed %d answers", n)
	}
}

func TestProcessedMessagesMovedToFolder(t *testing.T) {
	h := newHarness(t, harnessOptions{configure: func(c *mailbot.Config) { c.ProcessedFolder = "agentkit/done" }})
	code := h.newProblem("gate failed")
	h.start()
	mid := h.problemMessageID(code)
	h.imap.appendRaw(t, h.answerTo(t, code, mid, "retry"))
	h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "forged", body: "retry", unsigned: true}))
	eventually(t, "the decision", func() bool { return h.decision(code) != nil })
	eventually(t, "INBOX emptied into the folder", func() bool {
		st, err := h.imap.user.Status("agentkit/done", &imap.StatusOptions{NumMessages: true})
		return err == nil && *st.NumMessages == 2 && len(h.imap.flags(t, h.pki)) == 0
	})
	if n := h.count("SELECT count(*) FROM inbound"); n != 2 {
		t.Fatalf("%d phone-log rows", n)
	}
}

func TestUndecidableMessageWaitsThenGivesUp(t *testing.T) {
	h := newHarness(t, harnessOptions{phoneOff: true})
	code1, code2 := h.newProblem("first"), h.newProblem("second")
	h.dnsDown.Store(true)
	h.start()
	eventually(t, "IDLE running", func() bool { return h.imap.idleCount() >= 1 })
	uid := h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "Re: [agentkit] " + string(code1) + " demo", body: "retry"}))
	eventually(t, "the lookup failure logged", func() bool { return h.logs.count("cannot be decided now") >= 1 })
	if h.count("SELECT count(*) FROM inbound") != 0 || hasFlag(h.imap.flags(t, h.pki)[uid], imap.FlagSeen) {
		t.Fatal("an undecided message was stored or marked")
	}
	// DNS answers again: the next look decides it.
	h.dnsDown.Store(false)
	h.bot.Wake()
	eventually(t, "the decision once DNS answers", func() bool { return h.decision(code1) != nil })

	// A message that stays undecidable is given up after max_age.
	h.dnsDown.Store(true)
	uid2 := h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "Re: [agentkit] " + string(code2) + " demo", body: "retry"}))
	eventually(t, "the second lookup failure logged", func() bool { return h.logs.count("cannot be decided now") >= 2 })
	h.clock.Advance(h.cfg.MaxAge.D() + time.Hour)
	h.bot.Wake()
	eventually(t, "the message given up", func() bool {
		return h.count("SELECT count(*) FROM inbound WHERE outcome = 'refused' AND reason LIKE 'gave up%'") == 1
	})
	eventually(t, "the given-up message marked", func() bool { return hasFlag(h.imap.flags(t, h.pki)[uid2], imap.FlagSeen) })
	if h.decision(code2) != nil {
		t.Fatal("an undecidable message acted")
	}
}

func TestWrongPasswordIsReportedNeverShown(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.password = "wrong-horse-battery-staple"
	h.newProblem("gate failed")
	h.start()
	eventually(t, "the IMAP login refused", func() bool { return h.logs.count("level=WARN", "logging in to the IMAP server") == 1 })
	eventually(t, "the SMTP login refused", func() bool {
		return h.count("SELECT count(*) FROM outbox WHERE last_error LIKE '%535%' AND state = 'pending'") == 1
	})
	h.stop()
	sum, _ := mailbot.ReadOutbox(context.Background(), h.db, 0)
	states, _ := mailbot.MailboxStates(context.Background(), h.db)
	for _, text := range []string{h.logs.String(), fmt.Sprint(sum), fmt.Sprint(states)} {
		if strings.Contains(text, h.password) {
			t.Fatalf("the password was shown: %s", text)
		}
	}
	if len(states) != 1 || !strings.Contains(states[0].LastError, "check the username and the password") {
		t.Fatalf("mailbox state %+v", states)
	}
}
