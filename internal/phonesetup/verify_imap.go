package phonesetup

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// VerifyIMAP checks that the bot can reach and log in to its mailbox, opens
// INBOX read-only, and reports whether IDLE is offered (or the mailbox will
// be polled every poll). It returns nil or a *Failure.
func (v *Verifier) VerifyIMAP(ctx context.Context, s mailbot.Server, pw secrets.Password, poll time.Duration) error {
	r := &run{v: v, server: "IMAP", flag: "imap", s: s, readOnly: true}
	c, sel, err := r.imapLogin(ctx, pw, nil)
	if err != nil {
		return err
	}
	defer r.close()
	defer c.Close()
	r.ok(StepLogin, "logged in as %s; INBOX holds %d messages", s.Username, sel.NumMessages)

	r.deadline()
	if c.Caps().Has(imap.CapIdle) {
		r.ok(StepIdle, "IDLE is offered: replies reach the bot within seconds")
	} else {
		r.ok(StepIdle, "IDLE is not offered: the bot will check the mailbox every %s (poll_interval in phone.yaml)", poll)
	}
	r.deadline()
	_ = c.Logout().Wait()
	return nil
}

// imapLogin runs DNS, TCP, TLS, the greeting, LOGIN and a SELECT of INBOX
// (read-only unless writable), reporting each step. On success the caller
// closes the client and r.
func (r *run) imapLogin(ctx context.Context, pw secrets.Password, opts *imapclient.Options) (*imapclient.Client, *imap.SelectData, error) {
	s := r.s
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	if opts == nil {
		opts = &imapclient.Options{}
	}

	var c *imapclient.Client
	switch s.TLS {
	case mailbot.TLSStartTLS:
		cfg, err := r.tlsConfig()
		if err != nil {
			return nil, nil, err
		}
		var state tls.ConnectionState
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { state = cs; return nil }
		r.deadline()
		o := *opts
		o.TLSConfig = cfg
		c, err = imapclient.NewStartTLS(conn, &o)
		if err != nil {
			return nil, nil, r.startTLSFailure(err)
		}
		r.tlsOK(state)
	case mailbot.TLSNone:
		r.ok(StepTLS, "none: the password crosses the connection in clear, which is allowed only to a loopback address like %s", s.Host)
		c = imapclient.New(conn, opts)
	default:
		c = imapclient.New(conn, opts)
	}

	r.deadline()
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return nil, nil, r.fail(StepLogin, "%s port %d did not greet as an IMAP server (%s); check --imap (%s)", s.Host, s.Port, serverWords(err), defaultPorts("IMAP"))
	}
	r.deadline()
	if err := c.Login(s.Username, pw.Reveal()).Wait(); err != nil {
		c.Close()
		return nil, nil, r.fail(StepLogin, "%s", r.loginRefused(err))
	}
	r.deadline()
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: r.readOnly}).Wait()
	if err != nil {
		c.Close()
		return nil, nil, r.fail(StepLogin, "logged in as %s, but INBOX cannot be opened (%s); check that this is a mail account with an inbox", s.Username, serverWords(err))
	}
	ok = true
	return c, sel, nil
}

// startTLSFailure explains why upgrading with STARTTLS failed.
func (r *run) startTLSFailure(err error) error {
	var ie *imap.Error
	switch {
	case errors.As(err, &ie):
		return r.fail(StepTLS, "%s refused STARTTLS (%s); use --%s-tls implicit with its implicit-TLS port (%s)", r.s.Host, serverWords(err), r.flag, defaultPorts(r.server))
	case isTLSError(err):
		return r.tlsFailure(err)
	case isTimeout(err):
		return r.fail(StepTLS, "%s port %d sent no %s greeting within %s; it may expect implicit TLS (--%s-tls implicit; %s)", r.s.Host, r.s.Port, r.server, r.v.timeout(), r.flag, defaultPorts(r.server))
	}
	return r.fail(StepTLS, "STARTTLS with %s port %d failed (%s); check --%s-tls and the port (%s)", r.s.Host, r.s.Port, serverWords(err), r.flag, defaultPorts(r.server))
}

// loginRefused is the line for a refused login.
func (r *run) loginRefused(err error) string {
	if isTimeout(err) {
		return "the server did not answer the login within " + r.v.timeout().String() + "; try again, and check the server given with --" + r.flag
	}
	hint := "many providers need an app password here, not the account's own password"
	if r.v.LoginHint != "" {
		hint = "make an app password for the bot at " + r.v.LoginHint
	}
	return "the server refused the login of " + r.s.Username + " (" + serverWords(err) + "); check the user name (--username) and the password: " + hint
}
