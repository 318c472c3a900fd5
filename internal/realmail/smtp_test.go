package realmail_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/internal/realmail"
)

// submit sends msg from u to the recipients through c, authenticating
// first.
func submit(c *smtp.Client, u realmail.User, to []string, msg []byte) error {
	if err := c.Auth(sasl.NewPlainClient("", u.Address, u.Password)); err != nil {
		return err
	}
	return c.SendMail(u.Address, to, bytes.NewReader(msg))
}

func TestSMTPSubmissionDeliversToOwner(t *testing.T) {
	s := realmail.Start(t)
	count := newCounter()
	owner := login(t, s, s.Owner, count.handler())
	selectInbox(t, owner)
	idle, err := owner.Idle()
	if err != nil {
		t.Fatalf("IDLE: %v", err)
	}

	// Submission with STARTTLS, the certificate verified against CAFile.
	c, err := smtp.DialStartTLS(s.SMTPAddr, caTLS(t, s))
	if err != nil {
		t.Fatalf("connecting to Postfix with STARTTLS: %v", err)
	}
	defer c.Close()
	if !c.SupportsAuth("PLAIN") {
		t.Fatal("Postfix does not offer AUTH PLAIN after STARTTLS")
	}
	state, ok := c.TLSConnectionState()
	if !ok || len(state.VerifiedChains) == 0 {
		t.Fatal("the submission connection is not TLS with a verified certificate")
	}
	starttls, starttlsID := newMessage(s.Bot.Address, s.Owner.Address, "[agentkit] problem KXBQRT", "the gate failed")
	if err := submit(c, s.Bot, []string{s.Owner.Address}, starttls); err != nil {
		t.Fatalf("submitting as the bot: %v", err)
	}
	if err := c.Quit(); err != nil {
		t.Errorf("QUIT: %v", err)
	}

	// Submission over implicit TLS.
	c2, err := smtp.DialTLS(s.SMTPSAddr, caTLS(t, s))
	if err != nil {
		t.Fatalf("connecting to Postfix over TLS: %v", err)
	}
	defer c2.Close()
	implicit, implicitID := newMessage(s.Bot.Address, s.Owner.Address, "second", "over implicit TLS")
	if err := submit(c2, s.Bot, []string{s.Owner.Address}, implicit); err != nil {
		t.Fatalf("submitting over implicit TLS: %v", err)
	}

	// Postfix hands both to Dovecot over LMTP, and IDLE tells the owner.
	count.waitAtLeast(t, 2)
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatal(err)
	}
	header := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	text := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierText, Peek: true}
	msgs, err := owner.Fetch(imap.SeqSetNum(1, 2), &imap.FetchOptions{
		Envelope: true, BodySection: []*imap.FetchItemBodySection{header, text},
	}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	got := map[string]string{}
	for _, m := range msgs {
		got[m.Envelope.MessageID] = m.Envelope.Subject
		h := string(m.FindBodySection(header))
		if !strings.Contains(h, "Return-Path: <"+s.Bot.Address+">") {
			t.Errorf("message %s has no Return-Path of the bot:\n%s", m.Envelope.MessageID, h)
		}
		if !strings.Contains(h, "with ESMTPSA") {
			t.Errorf("message %s was not received over authenticated TLS SMTP (no \"with ESMTPSA\"):\n%s", m.Envelope.MessageID, h)
		}
	}
	if got[starttlsID] != "[agentkit] problem KXBQRT" || got[implicitID] != "second" || len(got) != 2 {
		t.Fatalf("the owner's INBOX holds %v, want %s and %s", got, starttlsID, implicitID)
	}
	for _, m := range msgs {
		if m.Envelope.MessageID == starttlsID && !strings.Contains(string(m.FindBodySection(text)), "the gate failed") {
			t.Errorf("the body arrived as %q", m.FindBodySection(text))
		}
	}
}

func TestSMTPSubmissionRefusals(t *testing.T) {
	s := realmail.Start(t)
	msg, _ := newMessage(s.Bot.Address, s.Owner.Address, "refused", "never delivered")

	t.Run("no AUTH before STARTTLS", func(t *testing.T) {
		c, err := smtp.Dial(s.SMTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Hello("localhost"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := c.Extension("STARTTLS"); !ok {
			t.Fatal("Postfix does not offer STARTTLS on submission")
		}
		if ok, _ := c.Extension("AUTH"); ok {
			t.Fatal("Postfix offers AUTH on a connection without TLS")
		}
		if err := c.Mail(s.Bot.Address, nil); err == nil {
			t.Fatal("Postfix accepted MAIL FROM without TLS")
		}
	})

	t.Run("no mail without AUTH", func(t *testing.T) {
		c, err := smtp.DialStartTLS(s.SMTPAddr, caTLS(t, s))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = c.SendMail(s.Bot.Address, []string{s.Owner.Address}, bytes.NewReader(msg))
		var smtpErr *smtp.SMTPError
		if !errors.As(err, &smtpErr) || smtpErr.Code/100 != 5 {
			t.Fatalf("sending without AUTH: got %v, want a permanent refusal", err)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		c, err := smtp.DialStartTLS(s.SMTPAddr, caTLS(t, s))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = c.Auth(sasl.NewPlainClient("", s.Bot.Address, s.Owner.Password))
		var smtpErr *smtp.SMTPError
		if !errors.As(err, &smtpErr) || smtpErr.Code != 535 {
			t.Fatalf("AUTH with a wrong password: got %v, want 535", err)
		}
	})

	t.Run("sender is not the login", func(t *testing.T) {
		c, err := smtp.DialStartTLS(s.SMTPAddr, caTLS(t, s))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Auth(sasl.NewPlainClient("", s.Bot.Address, s.Bot.Password)); err != nil {
			t.Fatal(err)
		}
		err = c.SendMail(s.Owner.Address, []string{s.Bot.Address}, bytes.NewReader(msg))
		var smtpErr *smtp.SMTPError
		if !errors.As(err, &smtpErr) || smtpErr.Code/100 != 5 {
			t.Fatalf("the bot sending as the owner: got %v, want a permanent refusal", err)
		}
	})

	t.Run("certificate not from the CA", func(t *testing.T) {
		c, err := smtp.DialStartTLS(s.SMTPAddr, &tls.Config{})
		if err == nil {
			// go-smtp defers the handshake to the first command after STARTTLS.
			err = c.Hello("localhost")
			c.Close()
		}
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Fatalf("STARTTLS without the CA: got %v, want an unknown authority error", err)
		}
	})
}

func TestSMTPStopAndStart(t *testing.T) {
	s := realmail.Start(t)
	addr := s.SMTPAddr
	s.StopSMTP(t)
	if c, err := smtp.Dial(addr); err == nil {
		c.Close()
		t.Fatal("submission still answers after StopSMTP")
	}
	s.StartSMTP(t)
	if s.SMTPAddr != addr {
		t.Fatalf("StartSMTP moved submission from %s to %s", addr, s.SMTPAddr)
	}
	count := newCounter()
	owner := login(t, s, s.Owner, count.handler())
	selectInbox(t, owner)
	idle, err := owner.Idle()
	if err != nil {
		t.Fatal(err)
	}
	c, err := smtp.DialStartTLS(s.SMTPAddr, s.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg, _ := newMessage(s.Bot.Address, s.Owner.Address, "after restart", "delivered")
	if err := submit(c, s.Bot, []string{s.Owner.Address}, msg); err != nil {
		t.Fatalf("submitting after StartSMTP: %v", err)
	}
	count.waitAtLeast(t, 1)
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSMTPQueuesWhileIMAPIsDown(t *testing.T) {
	s := realmail.Start(t)
	// Authenticate while Dovecot (which checks the password) is up, then
	// stop it: Postfix accepts the message but cannot hand it over.
	c, err := smtp.DialStartTLS(s.SMTPAddr, s.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", s.Bot.Address, s.Bot.Password)); err != nil {
		t.Fatal(err)
	}
	s.StopIMAP(t)
	msg, id := newMessage(s.Bot.Address, s.Owner.Address, "queued", "waited for Dovecot")
	if err := c.SendMail(s.Bot.Address, []string{s.Owner.Address}, bytes.NewReader(msg)); err != nil {
		t.Fatalf("Postfix refused a message while Dovecot was down: %v", err)
	}
	_ = c.Quit()
	waitForLog(t, s, "status=deferred")

	// Postfix retries within seconds (not its default minutes) once
	// Dovecot is back.
	s.StartIMAP(t)
	count := newCounter()
	owner := login(t, s, s.Owner, count.handler())
	if data := selectInbox(t, owner); data.NumMessages == 0 {
		idle, err := owner.Idle()
		if err != nil {
			t.Fatal(err)
		}
		count.waitAtLeast(t, 1)
		if err := idle.Close(); err != nil {
			t.Fatal(err)
		}
		if err := idle.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	msgs := fetchAll(t, owner)
	if len(msgs) != 1 || msgs[0].Envelope.MessageID != id {
		t.Fatalf("the owner's INBOX holds %d messages, want the queued %s", len(msgs), id)
	}
}
