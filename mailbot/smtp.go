package mailbot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/secrets"
)

// SMTP timeouts: long enough for a slow provider, short enough that a dead
// connection does not hold the outbox for the RFC's ten minutes.
const (
	smtpCommandTimeout    = time.Minute
	smtpSubmissionTimeout = 3 * time.Minute
)

// smtpSession is one authenticated SMTP connection.
type smtpSession struct {
	c    *smtp.Client
	stop func() bool
}

// openSMTP connects, secures and authenticates a session with the configured
// server. The password is handed to SASL PLAIN and nowhere else.
func openSMTP(ctx context.Context, d dialer, s Server, pw secrets.Password) (*smtpSession, error) {
	conn, tc, err := dialServer(ctx, d, s, "SMTP")
	if err != nil {
		return nil, err
	}
	// A cancelled context ends the session: the client itself has none.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*smtpSession, error) {
		stop()
		conn.Close()
		return nil, err
	}
	var c *smtp.Client
	if s.TLS == TLSStartTLS {
		c, err = smtp.NewClientStartTLS(conn, tc)
		var se *smtp.SMTPError
		if errors.As(err, &se) && se.Temporary() {
			// A busy or closing server (421 in its greeting) is no setup problem.
			return fail(fmt.Errorf("the SMTP server %s refuses connections for now; agentkit tries again later: %w", s.Addr(), err))
		}
		if err != nil {
			return fail(fmt.Errorf("STARTTLS with the SMTP server %s (check the port and tls mode; a private CA needs ca_file): %w", s.Addr(), err))
		}
	} else {
		c = smtp.NewClient(conn)
	}
	c.CommandTimeout, c.SubmissionTimeout = smtpCommandTimeout, smtpSubmissionTimeout
	if err := c.Hello("localhost"); err != nil {
		return fail(fmt.Errorf("greeting the SMTP server %s: %w", s.Addr(), err))
	}
	if ok, _ := c.Extension("AUTH"); ok {
		if !c.SupportsAuth(sasl.Plain) {
			return fail(fmt.Errorf("the SMTP server %s does not offer AUTH PLAIN; agentkit needs it (check the port: submission is 465 or 587)", s.Addr()))
		}
		if err := c.Auth(sasl.NewPlainClient("", s.Username, pw.Reveal())); err != nil {
			return fail(fmt.Errorf("logging in to the SMTP server %s as %s (check the username and the password: agentkit phone setup): %w", s.Addr(), s.Username, err))
		}
	} else if s.TLS != TLSNone || !pw.IsZero() {
		return fail(fmt.Errorf("the SMTP server %s offers no login (AUTH); agentkit sends only as an authenticated user: check the port (465 or 587)", s.Addr()))
	}
	return &smtpSession{c: c, stop: stop}, nil
}

// send submits one message; nil means the server accepted it.
func (s *smtpSession) send(from, to string, data []byte) error {
	if err := s.c.Mail(from, nil); err != nil {
		return err
	}
	if err := s.c.Rcpt(to, nil); err != nil {
		return err
	}
	w, err := s.c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	_, err = w.CloseWithResponse()
	return err
}

// reset readies the session for the next message after a refusal.
func (s *smtpSession) reset() error { return s.c.Reset() }

// close quits politely, then drops the connection.
func (s *smtpSession) close() {
	_ = s.c.Quit()
	_ = s.c.Close()
	s.stop()
}

// smtpFailure classifies a send error: permanent ones (5xx) are never
// retried, everything else is.
type smtpFailure struct {
	permanent bool
	// words are the server's, or the network error's, for `phone status`.
	words string
	// sessionOK reports whether the connection can carry the next message.
	sessionOK bool
}

func classifySMTP(err error) smtpFailure {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		words := smtpWords(se)
		switch {
		case se.Code >= 500:
			return smtpFailure{permanent: true, words: words, sessionOK: true}
		case se.Code == 421:
			// 421: the server is closing the connection.
			return smtpFailure{words: words}
		default:
			return smtpFailure{words: words, sessionOK: true}
		}
	}
	return smtpFailure{words: err.Error()}
}

// smtpWords renders a server reply as the server wrote it: "550 5.1.1 No such user".
func smtpWords(se *smtp.SMTPError) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d", se.Code)
	if ec := se.EnhancedCode; ec != smtp.NoEnhancedCode && ec != smtp.EnhancedCodeNotSet {
		fmt.Fprintf(&b, " %d.%d.%d", ec[0], ec[1], ec[2])
	}
	if m := strings.TrimSpace(se.Message); m != "" {
		b.WriteString(" ")
		b.WriteString(strings.ReplaceAll(m, "\n", " "))
	}
	return b.String()
}
