package phonesetup

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

const (
	botUser = "bot@corp.test"
	botPass = "Zq9-app-password-Zq9"
)

// fakeDNS resolves the test names to loopback and nothing else.
type fakeDNS map[string][]string

func (f fakeDNS) LookupHost(_ context.Context, host string) ([]string, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var dns = fakeDNS{"imap.corp.test": {"127.0.0.1"}, "smtp.corp.test": {"127.0.0.1"}, "mail.corp.test": {"127.0.0.1"}}

// world is a CA with an IMAP and an SMTP server behind it.
type world struct {
	ca       *mailtest.CA
	imap     *mailtest.IMAP
	smtp     *mailtest.SMTP
	checks   []Check
	imapS    mailbot.Server
	smtpS    mailbot.Server
	verifier *Verifier
}

type worldOptions struct {
	imapTLS, smtpTLS mailbot.TLSMode
	noIdle           bool
	smtpNoAuth       bool
	cert             mailtest.CertOptions // for both servers
	otherCA          bool                 // servers use a CA the client is not told about
	selfSigned       bool                 // servers use a self-signed certificate
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	if o.imapTLS == "" {
		o.imapTLS = mailbot.TLSImplicit
	}
	if o.smtpTLS == "" {
		o.smtpTLS = mailbot.TLSImplicit
	}
	if len(o.cert.Names) == 0 {
		o.cert.Names = []string{"imap.corp.test", "smtp.corp.test", "127.0.0.1"}
	}
	w := &world{ca: mailtest.NewCA(t, "agentkit test CA")}
	serverCA := w.ca
	if o.otherCA {
		serverCA = mailtest.NewCA(t, "Intercepting Proxy CA")
	}
	tlsFor := func(m mailbot.TLSMode) *tls.Config {
		if m == mailbot.TLSNone {
			return nil
		}
		if o.selfSigned {
			return mailtest.SelfSigned(t, o.cert)
		}
		return serverCA.ServerTLS(t, o.cert)
	}
	w.imap = mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: tlsFor(o.imapTLS), StartTLS: o.imapTLS == mailbot.TLSStartTLS, NoIdle: o.noIdle, Users: map[string]string{botUser: botPass}})
	w.smtp = mailtest.StartSMTP(t, mailtest.SMTPOptions{TLS: tlsFor(o.smtpTLS), StartTLS: o.smtpTLS == mailbot.TLSStartTLS, NoAuth: o.smtpNoAuth, Users: map[string]string{botUser: botPass}})
	w.imapS = server(t, "imap.corp.test", w.imap.Addr, o.imapTLS, w.ca.File)
	w.smtpS = server(t, "smtp.corp.test", w.smtp.Addr, o.smtpTLS, w.ca.File)
	w.verifier = &Verifier{Resolver: dns, Timeout: 5 * time.Second, Report: func(c Check) { w.checks = append(w.checks, c) }}
	return w
}

func server(t *testing.T, host, addr string, m mailbot.TLSMode, ca string) mailbot.Server {
	_, port, err := SplitHostPort(addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m == mailbot.TLSNone {
		host = "127.0.0.1"
	}
	return mailbot.Server{Host: host, Port: port, TLS: m, CAFile: ca, Username: botUser}
}

func (w *world) verify(t *testing.T, pw string) error {
	t.Helper()
	c := mailbot.DefaultConfig()
	c.BotAddress, c.OwnerAddresses = botUser, []string{"me@home.test"}
	c.IMAP, c.SMTP = w.imapS, w.smtpS
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return w.verifier.Verify(context.Background(), &c, secrets.NewPassword(pw))
}

func (w *world) lines() string {
	var b strings.Builder
	for _, c := range w.checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		b.WriteString(mark + " " + c.String() + "\n")
	}
	return b.String()
}

func TestVerifyPasses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		imapTLS, smtpTLS mailbot.TLSMode
		noIdle           bool
		want             []string
	}{
		{"implicit TLS", mailbot.TLSImplicit, mailbot.TLSImplicit, false, []string{
			"IMAP DNS: imap.corp.test is 127.0.0.1",
			"IMAP TCP: connected to 127.0.0.1:",
			`IMAP TLS: TLS 1.3, certificate for imap.corp.test from "agentkit test CA" (agentkit tests), valid until `,
			"IMAP login: logged in as bot@corp.test; INBOX holds 0 messages",
			"IMAP IDLE: IDLE is offered",
			"SMTP TLS: TLS 1.3, certificate for smtp.corp.test",
			"SMTP login: logged in as bot@corp.test",
		}},
		{"STARTTLS", mailbot.TLSStartTLS, mailbot.TLSStartTLS, false, []string{
			"IMAP TLS: TLS 1.3, certificate for imap.corp.test",
			"IMAP IDLE: IDLE is offered",
			"SMTP TLS: TLS 1.3, certificate for smtp.corp.test",
			"SMTP login: logged in as bot@corp.test",
		}},
		{"no IDLE", mailbot.TLSImplicit, mailbot.TLSStartTLS, true, []string{
			"IMAP login: logged in as bot@corp.test",
			"IMAP IDLE: IDLE is not offered: the bot will check the mailbox every 1m0s (poll_interval in phone.yaml)",
		}},
		{"none on loopback", mailbot.TLSNone, mailbot.TLSNone, false, []string{
			"IMAP DNS: 127.0.0.1 is an address; nothing to look up",
			"IMAP TLS: none: the password crosses the connection in clear",
			"IMAP login: logged in as bot@corp.test",
			"SMTP login: logged in as bot@corp.test",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOptions{imapTLS: tc.imapTLS, smtpTLS: tc.smtpTLS, noIdle: tc.noIdle})
			if err := w.verify(t, botPass); err != nil {
				t.Fatalf("%v\n%s", err, w.lines())
			}
			got := w.lines()
			for _, want := range tc.want {
				if !strings.Contains(got, "ok   "+want) {
					t.Errorf("missing %q in:\n%s", want, got)
				}
			}
			if strings.Contains(got, "FAIL") || strings.Contains(got, botPass) {
				t.Errorf("checks:\n%s", got)
			}
			if n := len(w.smtp.Messages()); n != 0 {
				t.Errorf("verification sent %d messages", n)
			}
		})
	}
}

// TestVerifyFailures: each failure is one line saying what is wrong and
// what to do, and names the failing step.
func TestVerifyFailures(t *testing.T) {
	closedPort := func(t *testing.T) int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return port
	}
	cases := []struct {
		name   string
		opts   worldOptions
		change func(t *testing.T, w *world)
		pw     string
		server string
		step   Step
		want   []string
	}{
		{name: "DNS: no such host", change: func(t *testing.T, w *world) { w.imapS.Host = "imap.corp.tset" },
			server: "IMAP", step: StepDNS, want: []string{"imap.corp.tset does not exist in DNS; check the spelling of the host given with --imap"}},
		{name: "TCP: nothing listening", change: func(t *testing.T, w *world) { w.smtpS.Port = closedPort(t) },
			server: "SMTP", step: StepTCP, want: []string{"smtp.corp.test refuses connections on port", "check the port given with --smtp (SMTP submission uses 465 with implicit TLS and 587 with STARTTLS)"}},
		{name: "TLS: unknown authority", opts: worldOptions{otherCA: true},
			server: "IMAP", step: StepTLS, want: []string{`the certificate of imap.corp.test is signed by "Intercepting Proxy CA" (agentkit tests), which this computer does not trust (nor does the CA file`, "give its CA certificate with --imap-ca FILE", "intercepting"}},
		{name: "TLS: no CA file for a private server", change: func(t *testing.T, w *world) { w.imapS.CAFile = "" },
			server: "IMAP", step: StepTLS, want: []string{"which this computer does not trust; if it is your own server, give its CA certificate with --imap-ca FILE (ca_file in phone.yaml)"}},
		{name: "TLS: wrong host name", opts: worldOptions{cert: mailtest.CertOptions{Names: []string{"mail.other.test"}}},
			server: "IMAP", step: StepTLS, want: []string{"the certificate of imap.corp.test is for mail.other.test, not imap.corp.test; give a host name the certificate names with --imap"}},
		{name: "TLS: expired", opts: worldOptions{cert: mailtest.CertOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}},
			server: "IMAP", step: StepTLS, want: []string{"the certificate of imap.corp.test expired on " + time.Now().Add(-24*time.Hour).UTC().Format(time.DateOnly), "renew it, or the clock is wrong"}},
		{name: "TLS: not yet valid", opts: worldOptions{cert: mailtest.CertOptions{NotBefore: time.Now().Add(48 * time.Hour), NotAfter: time.Now().Add(96 * time.Hour)}},
			server: "IMAP", step: StepTLS, want: []string{"is valid only from", "check the clock"}},
		{name: "TLS: implicit against a STARTTLS server", opts: worldOptions{imapTLS: mailbot.TLSStartTLS}, change: func(t *testing.T, w *world) { w.imapS.TLS = mailbot.TLSImplicit },
			server: "IMAP", step: StepTLS, want: []string{"did not answer in TLS; it may expect STARTTLS (--imap-tls starttls)"}},
		{name: "TLS: STARTTLS not offered by SMTP", opts: worldOptions{smtpTLS: mailbot.TLSNone}, change: func(t *testing.T, w *world) { w.smtpS.TLS = mailbot.TLSStartTLS },
			server: "SMTP", step: StepTLS, want: []string{"does not offer STARTTLS; use --smtp-tls implicit"}},
		{name: "TLS: STARTTLS refused by IMAP", opts: worldOptions{imapTLS: mailbot.TLSNone}, change: func(t *testing.T, w *world) { w.imapS.TLS = mailbot.TLSStartTLS },
			server: "IMAP", step: StepTLS, want: []string{"refused STARTTLS", "use --imap-tls implicit"}},
		{name: "TLS: STARTTLS against an implicit-TLS port", change: func(t *testing.T, w *world) {
			w.smtpS.TLS = mailbot.TLSStartTLS
			w.verifier.Timeout = 300 * time.Millisecond // the server waits for a TLS hello that never comes
		}, server: "SMTP", step: StepTLS, want: []string{"sent no SMTP greeting within 300ms; it may expect implicit TLS (--smtp-tls implicit"}},
		{name: "TLS: unreadable CA file", change: func(t *testing.T, w *world) {
			// Validate saw the file; it is a folder by the time TLS starts.
			w.smtpS.CAFile = filepath.Join(t.TempDir(), "ca.pem")
			os.Mkdir(w.smtpS.CAFile, 0o700)
		}, server: "SMTP", step: StepTLS, want: []string{"ca.pem cannot be read (is a directory); give a readable PEM file with --smtp-ca"}},
		{name: "TLS: self-signed", change: func(t *testing.T, w *world) {
			w.imapS.CAFile = ""
			w.verifier.Timeout = 5 * time.Second
		}, opts: worldOptions{selfSigned: true}, server: "IMAP", step: StepTLS, want: []string{`the certificate of imap.corp.test is self-signed ("imap.corp.test")`}},
		{name: "TLS: CA file without a certificate", change: func(t *testing.T, w *world) {
			f := filepath.Join(t.TempDir(), "notpem.txt")
			os.WriteFile(f, []byte("hello"), 0o644)
			w.imapS.CAFile = f
		}, server: "IMAP", step: StepTLS, want: []string{"holds no PEM certificate"}},
		{name: "IMAP login refused", pw: "wrong", server: "IMAP", step: StepLogin,
			want: []string{"the server refused the login of bot@corp.test (NO [AUTHENTICATIONFAILED]", "check the user name (--username) and the password: many providers need an app password"}},
		{name: "IMAP login refused, with the provider's hint", pw: "wrong", change: func(t *testing.T, w *world) { w.verifier.LoginHint = "https://myaccount.google.com/apppasswords" },
			server: "IMAP", step: StepLogin, want: []string{"make an app password for the bot at https://myaccount.google.com/apppasswords"}},
		{name: "SMTP login refused", change: func(t *testing.T, w *world) { w.smtpS.Username = "someone@corp.test" },
			server: "SMTP", step: StepLogin, want: []string{"the server refused the login of someone@corp.test (535 5.7.8 Authentication failed)"}},
		{name: "SMTP without AUTH", opts: worldOptions{smtpNoAuth: true},
			server: "SMTP", step: StepLogin, want: []string{"offers no login (AUTH), so it would not relay the bot's mail"}},
		{name: "IMAP port pointed at SMTP", change: func(t *testing.T, w *world) { w.imapS = w.smtpS; w.imapS.Host = "imap.corp.test" },
			server: "IMAP", step: StepLogin, want: []string{"did not greet as an IMAP server", "IMAP uses 993 with implicit TLS and 143 with STARTTLS"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.opts)
			if tc.change != nil {
				tc.change(t, w)
			}
			pw := tc.pw
			if pw == "" {
				pw = botPass
			}
			err := w.verify(t, pw)
			f, ok := err.(*Failure)
			if !ok {
				t.Fatalf("err = %v (%T), want a *Failure\n%s", err, err, w.lines())
			}
			if f.Server != tc.server || f.Step != tc.step || f.OK {
				t.Errorf("failed at %s %s, want %s %s", f.Server, f.Step, tc.server, tc.step)
			}
			for _, want := range tc.want {
				if !strings.Contains(f.Line, want) {
					t.Errorf("line lacks %q:\n%s", want, f.Line)
				}
			}
			if strings.Contains(f.Line, "\n") || strings.Contains(w.lines(), botPass) {
				t.Errorf("not one clean line: %q", f.Line)
			}
			last := w.checks[len(w.checks)-1]
			if last != f.Check {
				t.Errorf("the failure was not reported last: %v", last)
			}
		})
	}
}

func TestVerifyStopsWhenCancelled(t *testing.T) {
	w := newWorld(t, worldOptions{})
	// A listener that accepts and never speaks: only the context ends it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	w.imapS.Port = ln.Addr().(*net.TCPAddr).Port
	w.verifier.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	w.verifier.Report = func(c Check) {
		if c.Step == StepTCP {
			cancel()
		}
	}
	done := make(chan error, 1)
	go func() {
		c := mailbot.DefaultConfig()
		c.BotAddress, c.OwnerAddresses, c.IMAP, c.SMTP = botUser, []string{"me@home.test"}, w.imapS, w.smtpS
		done <- w.verifier.Verify(ctx, &c, secrets.NewPassword(botPass))
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("verification passed against a silent server")
		}
	case <-time.After(time.Minute):
		t.Fatal("verification did not stop when its context was cancelled")
	}
}
