package mailbot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"time"

	"github.com/agentkit/agentkit/secrets"
)

// MailboxCheck is what `agentkit phone test` reports of the IMAP side.
type MailboxCheck struct {
	Account     string `json:"account"`
	UIDValidity uint32 `json:"uid_validity"`
	Messages    uint32 `json:"messages"`
	IdleOffered bool   `json:"idle_offered"`
}

func probeDialer(d Dialer) Dialer {
	if d == nil {
		return &net.Dialer{Timeout: 30 * time.Second}
	}
	return d
}

// CheckMailbox logs in to the IMAP server, selects INBOX and reports what it
// found, changing nothing. d may be nil.
func CheckMailbox(ctx context.Context, cfg Config, pw secrets.Password, d Dialer) (MailboxCheck, error) {
	if err := cfg.Validate(); err != nil {
		return MailboxCheck{}, fmt.Errorf("phone settings: %w", err)
	}
	ic, err := openIMAP(ctx, probeDialer(d), cfg.IMAP, pw, DefaultCommandTimeout)
	if err != nil {
		return MailboxCheck{}, err
	}
	defer ic.logout()
	sel, err := ic.selectInbox()
	if err != nil {
		return MailboxCheck{}, err
	}
	return MailboxCheck{Account: fmt.Sprintf("%s on %s", cfg.IMAP.Username, cfg.IMAP.Addr()), UIDValidity: sel.UIDValidity,
		Messages: sel.NumMessages, IdleOffered: ic.canIdle()}, nil
}

// SendTest sends a test email to the first owner address now, outside the
// outbox, and returns its Message-ID. d may be nil.
func SendTest(ctx context.Context, cfg Config, pw secrets.Password, d Dialer, now time.Time) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("phone settings: %w", err)
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("drawing a Message-ID: %w", err)
	}
	id := fmt.Sprintf("agentkit.test.%s@%s", hex.EncodeToString(nonce[:]), messageIDDomain(&cfg))
	body := wrapText(fmt.Sprintf("This is a test from agentkit phone test, sent %s. If you read it on your phone, problem emails will reach you too.",
		now.UTC().Format("2006-01-02 15:04 UTC")), wrapWidth) + "\n\n" +
		wrapText("To check the way back, reply with the word status: when the agentkit service runs, it answers within a minute or two.", wrapWidth) +
		"\n\n" + obeyedFooter(cfg.OwnerAddresses)
	data, err := buildMessage(envelope{From: cfg.BotAddress, To: cfg.OwnerAddresses[0], MessageID: id, Date: now,
		Subject: subjectTag + " test from agentkit phone test"}, body)
	if err != nil {
		return "", err
	}
	sess, err := openSMTP(ctx, probeDialer(d), cfg.SMTP, pw)
	if err != nil {
		return "", err
	}
	defer sess.close()
	if err := sess.send(cfg.BotAddress, cfg.OwnerAddresses[0], data); err != nil {
		return "", fmt.Errorf("sending the test email through %s: %w", cfg.SMTP.Addr(), err)
	}
	return id, nil
}
