package phonesetup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// StepSend is the step that hands the test email to the SMTP server.
const StepSend Step = "send"

// TestWord is what the owner is asked to reply to the test email.
const TestWord = "retry"

// TestMail is the email phone test sends the owner.
type TestMail struct {
	// Code is the fresh code in its subject (no problem has it).
	Code string
	// MessageID is its Message-ID, without brackets, under the bot's own
	// Message-ID domain.
	MessageID string
	// To is the owner address it goes to.
	To string
	// Raw is the whole message, CRLF line ends.
	Raw []byte
}

// NewTestMail writes the test email: to the first owner address, with code
// in the subject, asking for a reply with TestWord.
func NewTestMail(cfg *mailbot.Config, code problems.Code, now time.Time, rnd io.Reader) (TestMail, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [12]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return TestMail{}, fmt.Errorf("drawing a Message-ID: %w", err)
	}
	botDomain := strings.ToLower(cfg.BotAddress[strings.LastIndexByte(cfg.BotAddress, '@')+1:])
	m := TestMail{Code: string(code), MessageID: "test." + hex.EncodeToString(b[:]) + "@agentkit." + botDomain, To: cfg.OwnerAddresses[0]}
	subject := fmt.Sprintf("[agentkit] %s test: will replies from your phone be obeyed?", code)
	mailto := "mailto:" + cfg.BotAddress + "?subject=" + url.PathEscape("Re: "+subject) + "&body=" + TestWord
	lines := []string{
		"From: agentkit <" + cfg.BotAddress + ">",
		"To: <" + m.To + ">",
		"Subject: " + subject,
		"Date: " + now.Format(time.RFC1123Z),
		"Message-ID: <" + m.MessageID + ">",
		"Auto-Submitted: auto-generated",
		"X-Auto-Response-Suppress: All",
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=utf-8",
		"Content-Transfer-Encoding: 8bit",
		"",
		"This is a test from agentkit phone test, code " + string(code) + ".",
		"",
		"Reply to this email from your phone with one word:",
		"",
		"    " + TestWord,
		"",
		"or tap: " + mailto,
		"",
		"agentkit phone test, waiting at your desk, then shows whether",
		"your reply passes every check, and what to change if it does not.",
		"Nothing else happens: " + string(code) + " is not a real problem.",
		"",
		"-- ",
		"agentkit obeys replies only from your own address with DKIM or SPF pass.",
	}
	m.Raw = []byte(strings.Join(lines, "\r\n") + "\r\n")
	return m, nil
}

// Send logs in to the SMTP server and hands it the test email. It returns
// nil or a *Failure (a refused recipient says the server's words).
func (v *Verifier) Send(ctx context.Context, cfg *mailbot.Config, pw secrets.Password, m TestMail) error {
	r := &run{v: v, server: "SMTP", flag: "smtp", s: cfg.SMTP}
	c, err := r.smtpLogin(ctx, pw)
	if err != nil {
		return err
	}
	defer r.close()
	defer c.Close()
	r.deadline()
	if err := c.Mail(cfg.BotAddress, nil); err != nil {
		return r.fail(StepSend, "the server refused the sender %s (%s); the login %s may not send as this address: check bot_address", cfg.BotAddress, serverWords(err), cfg.SMTP.Username)
	}
	r.deadline()
	if err := c.Rcpt(m.To, nil); err != nil {
		return r.fail(StepSend, "the server refused the recipient %s (%s); check owner_addresses", m.To, serverWords(err))
	}
	r.deadline()
	w, err := c.Data()
	if err != nil {
		return r.fail(StepSend, "the server refused the message (%s)", serverWords(err))
	}
	if _, err := w.Write(m.Raw); err != nil {
		return r.fail(StepSend, "sending the message failed (%s)", serverWords(err))
	}
	r.deadline()
	if err := w.Close(); err != nil {
		return r.fail(StepSend, "the server did not accept the message (%s)", serverWords(err))
	}
	r.ok(StepSend, "the test email to %s was accepted", m.To)
	r.deadline()
	_ = c.Quit()
	return nil
}
