package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/secrets"
)

const (
	testBot      = "bot@corp.test"
	testPassword = "Zq9-bot-app-password-Zq9"
)

// phoneWorld is one user's agentkit home with loopback IMAP and SMTP
// servers behind a test CA.
type phoneWorld struct {
	t    *testing.T
	home string
	env  map[string]string
	ca   *mailtest.CA
	imap *mailtest.IMAP
	smtp *mailtest.SMTP
	out  bytes.Buffer
	err  bytes.Buffer
}

func newPhoneWorld(t *testing.T) *phoneWorld {
	t.Helper()
	w := &phoneWorld{t: t, home: filepath.Join(t.TempDir(), "akhome")}
	w.env = map[string]string{"AGENTKIT_HOME": w.home}
	w.ca = mailtest.NewCA(t, "agentkit test CA")
	cert := mailtest.CertOptions{Names: []string{"imap.corp.test", "smtp.corp.test", "127.0.0.1", "localhost"}}
	w.imap = mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: w.ca.ServerTLS(t, cert), Users: map[string]string{testBot: testPassword}})
	w.smtp = mailtest.StartSMTP(t, mailtest.SMTPOptions{TLS: w.ca.ServerTLS(t, cert), StartTLS: true, Users: map[string]string{testBot: testPassword}})
	return w
}

func (w *phoneWorld) ios(stdin string) *ioStreams {
	w.out.Reset()
	w.err.Reset()
	return &ioStreams{
		In:     strings.NewReader(stdin),
		Out:    &w.out,
		Err:    &w.err,
		Getenv: func(k string) string { return w.env[k] },
	}
}

// deps resolve imap.corp.test and smtp.corp.test to loopback; keeper is
// nil (Linux and macOS) or a Credential Manager over a map (Windows).
func (w *phoneWorld) deps(keeper secrets.Writer) phoneDeps {
	return phoneDeps{Keeper: keeper, Resolver: loopbackDNS{}}
}

type loopbackDNS struct{}

func (loopbackDNS) LookupHost(_ context.Context, host string) ([]string, error) {
	switch host {
	case "imap.corp.test", "smtp.corp.test":
		return []string{"127.0.0.1"}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// setup runs agentkit phone setup with args and stdin.
func (w *phoneWorld) setup(deps phoneDeps, stdin string, args ...string) error {
	w.t.Helper()
	var opts *phoneSetupOptions
	ios := w.ios(stdin)
	cmd := newCmdPhoneSetup(ios, func(o *phoneSetupOptions) error { opts = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&w.out)
	cmd.SetErr(&w.err)
	if err := cmd.Execute(); err != nil {
		return err
	}
	opts.deps = deps
	return phoneSetupRun(context.Background(), opts)
}

func (w *phoneWorld) status(deps phoneDeps) string {
	w.t.Helper()
	opts := &phoneStatusOptions{ios: w.ios(""), deps: deps}
	if err := phoneStatusRun(context.Background(), opts); err != nil {
		w.t.Fatal(err)
	}
	return w.out.String()
}

// imapFlag and smtpFlag point setup at the loopback servers by name.
func (w *phoneWorld) serverFlags() []string {
	return []string{
		"--imap", "imap.corp.test:" + port(w.t, w.imap.Addr), "--imap-tls", "implicit", "--imap-ca", w.ca.File,
		"--smtp", "smtp.corp.test:" + port(w.t, w.smtp.Addr), "--smtp-tls", "starttls", "--smtp-ca", w.ca.File,
	}
}

func port(t *testing.T, addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// memVault stands in for the Windows Credential Manager.
type memVault map[string][]byte

func (v memVault) ReadGeneric(target string) ([]byte, error) {
	b, ok := v[target]
	if !ok {
		return nil, secrets.ErrNotFound
	}
	return append([]byte(nil), b...), nil
}

func (v memVault) WriteGeneric(target, _, _ string, blob []byte) error {
	v[target] = append([]byte(nil), blob...)
	return nil
}

func (v memVault) DeleteGeneric(target string) error {
	if _, ok := v[target]; !ok {
		return secrets.ErrNotFound
	}
	delete(v, target)
	return nil
}
