package mailbot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

func TestProbesForPhoneTest(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.imap.appendRaw(t, h.reply(t, replyOpts{subject: "hello", body: "hello"}))
	pw := secrets.NewPassword(botPassword)
	check, err := mailbot.CheckMailbox(context.Background(), h.cfg, pw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if check.Messages != 1 || !check.IdleOffered || check.UIDValidity == 0 {
		t.Fatalf("mailbox check %+v", check)
	}
	id, err := mailbot.SendTest(context.Background(), h.cfg, pw, nil, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	mails := h.smtp.received()
	if len(mails) != 1 || mails[0].to[0] != ownerAddr {
		t.Fatalf("%d test emails", len(mails))
	}
	e := parseMail(t, mails[0].data)
	if got, _ := e.header.MessageID(); got != id || !strings.Contains(e.body, "reply with the word status") {
		t.Fatalf("test email %q:\n%s", got, e.body)
	}

	_, err = mailbot.CheckMailbox(context.Background(), h.cfg, secrets.NewPassword("wrong"), nil)
	if err == nil || !strings.Contains(err.Error(), "check the username and the password") || strings.Contains(err.Error(), botPassword) {
		t.Fatalf("a wrong password gave %v", err)
	}
	_, err = mailbot.SendTest(context.Background(), h.cfg, secrets.NewPassword("wrong"), nil, h.clock.Now())
	if err == nil || !strings.Contains(err.Error(), "535") {
		t.Fatalf("a wrong SMTP password gave %v", err)
	}
}
