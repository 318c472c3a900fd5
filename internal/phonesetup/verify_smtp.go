package phonesetup

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// heloName is the name the bot gives in EHLO.
const heloName = "localhost"

// VerifySMTP checks that the bot can reach its SMTP server and log in. It
// sends nothing. It returns nil or a *Failure.
func (v *Verifier) VerifySMTP(ctx context.Context, s mailbot.Server, pw secrets.Password) error {
	r := &run{v: v, server: "SMTP", flag: "smtp", s: s}
	c, err := r.smtpLogin(ctx, pw)
	if err != nil {
		return err
	}
	defer r.close()
	defer c.Close()
	r.deadline()
	_ = c.Quit()
	return nil
}

// smtpLogin runs DNS, TCP, TLS, EHLO and AUTH, reporting each step. On
// success the caller closes the client and r.
func (r *run) smtpLogin(ctx context.Context, pw secrets.Password) (*smtp.Client, error) {
	s := r.s
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()

	var c *smtp.Client
	switch s.TLS {
	case mailbot.TLSStartTLS:
		cfg, err := r.tlsConfig()
		if err != nil {
			return nil, err
		}
		var state tls.ConnectionState
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { state = cs; return nil }
		r.deadline()
		c, err = smtp.NewClientStartTLS(conn, cfg)
		if err != nil {
			return nil, r.smtpStartTLSFailure(err)
		}
		c.CommandTimeout = r.v.timeout()
		// go-smtp shakes hands lazily: EHLO over the new layer does it.
		r.deadline()
		if err := c.Hello(heloName); err != nil {
			if isTLSError(err) {
				return nil, r.tlsFailure(err)
			}
			return nil, r.fail(StepTLS, "%s port %d failed after STARTTLS (%s); check --smtp-tls and the port (%s)", s.Host, s.Port, serverWords(err), defaultPorts("SMTP"))
		}
		r.tlsOK(state)
	default:
		if s.TLS == mailbot.TLSNone {
			r.ok(StepTLS, "none: the password crosses the connection in clear, which is allowed only to a loopback address like %s", s.Host)
		}
		c = smtp.NewClient(conn)
		c.CommandTimeout = r.v.timeout()
		r.deadline()
		if err := c.Hello(heloName); err != nil {
			return nil, r.fail(StepLogin, "%s port %d did not greet as an SMTP server (%s); check --smtp (%s)", s.Host, s.Port, serverWords(err), defaultPorts("SMTP"))
		}
	}

	r.deadline()
	if ok, _ := c.Extension("AUTH"); !ok {
		c.Close()
		return nil, r.fail(StepLogin, "%s port %d offers no login (AUTH), so it would not relay the bot's mail; use the provider's submission server and port (%s)", s.Host, s.Port, defaultPorts("SMTP"))
	}
	var mech sasl.Client
	switch {
	case c.SupportsAuth(sasl.Plain):
		mech = sasl.NewPlainClient("", s.Username, pw.Reveal())
	case c.SupportsAuth(sasl.Login):
		mech = sasl.NewLoginClient(s.Username, pw.Reveal())
	default:
		_, mechs := c.Extension("AUTH")
		c.Close()
		return nil, r.fail(StepLogin, "%s offers only the login methods %s, and agentkit speaks PLAIN and LOGIN; use another submission server", s.Host, mechs)
	}
	r.deadline()
	if err := c.Auth(mech); err != nil {
		c.Close()
		return nil, r.fail(StepLogin, "%s", r.loginRefused(err))
	}
	r.ok(StepLogin, "logged in as %s", s.Username)
	ok = true
	return c, nil
}

func (r *run) smtpStartTLSFailure(err error) error {
	var se *smtp.SMTPError
	switch {
	case errors.As(err, &se):
		return r.fail(StepTLS, "%s refused STARTTLS (%s); use --smtp-tls implicit with its implicit-TLS port (%s)", r.s.Host, serverWords(err), defaultPorts("SMTP"))
	case strings.Contains(err.Error(), "doesn't support STARTTLS"):
		return r.fail(StepTLS, "%s port %d does not offer STARTTLS; use --smtp-tls implicit with its implicit-TLS port (%s)", r.s.Host, r.s.Port, defaultPorts("SMTP"))
	}
	return r.startTLSFailure(err)
}
