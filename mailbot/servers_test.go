package mailbot_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// testPKI is a CA made for one test and a certificate it signed for the
// loopback servers, so certificate verification really runs.
type testPKI struct {
	caFile string
	server *tls.Config
}

func newPKI(tb testing.TB) *testPKI {
	tb.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentkit test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	caFile := filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		tb.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &testPKI{caFile: caFile, server: &tls.Config{Certificates: []tls.Certificate{cert}}}
}

// cutListener can drop every connection and refuse new ones, as a network
// outage would.
type cutListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  bool
}

func newCutListener(tb testing.TB) *cutListener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return &cutListener{Listener: ln, conns: map[net.Conn]struct{}{}}
}

func (l *cutListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.down {
			l.mu.Unlock()
			c.Close()
			continue
		}
		tc := &trackedConn{Conn: c, l: l}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

// setDown drops every open connection when down, and refuses new ones until up.
func (l *cutListener) setDown(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = down
	if down {
		for c := range l.conns {
			c.(*trackedConn).Conn.Close()
		}
	}
}

func (l *cutListener) port() int { return l.Addr().(*net.TCPAddr).Port }

type trackedConn struct {
	net.Conn
	l *cutListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// imapTestServer is go-imap's in-memory server on loopback, with a spy on
// IDLE and on the downloads it serves.
type imapTestServer struct {
	ln   *cutListener
	mem  *imapmemserver.Server
	user *imapmemserver.User
	srv  *imapserver.Server
	// port is where the bot connects (the proxy's, when IDLE is hidden).
	port  int
	plain bool

	// repoll is how often the spy looks again for changes during IDLE
	// (0: never, as for measuring idle CPU).
	repoll time.Duration

	mu          sync.Mutex
	idles       int
	idleCh      chan struct{}
	bodyFetches []imap.NumSet
}

const (
	botAddr     = "bot@example.test"
	ownerAddr   = "owner@owner.test"
	botPassword = "correct horse battery staple"
)

type imapMode struct {
	// idle offers IDLE; without it the server speaks plain text on loopback
	// through a proxy that hides IDLE (go-imap's server always offers it).
	idle     bool
	starttls bool
}

func newIMAPServer(tb testing.TB, pki *testPKI, mode imapMode) *imapTestServer {
	tb.Helper()
	s := &imapTestServer{ln: newCutListener(tb), mem: imapmemserver.New(), idleCh: make(chan struct{}, 64), repoll: 20 * time.Millisecond}
	s.user = imapmemserver.NewUser(botAddr, botPassword)
	if err := s.user.Create("INBOX", nil); err != nil {
		tb.Fatal(err)
	}
	s.mem.AddUser(s.user)
	caps := imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapMove: {}, imap.CapUIDPlus: {}, imap.CapNamespace: {}}
	if mode.idle {
		caps[imap.CapIdle] = struct{}{}
	}
	opts := &imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &spySession{Session: s.mem.NewSession(), srv: s}, nil, nil
		},
		Caps:   caps,
		Logger: log.New(io.Discard, "", 0),
	}
	var ln net.Listener = tls.NewListener(s.ln, pki.server)
	s.port = s.ln.port()
	switch {
	case !mode.idle:
		opts.InsecureAuth, s.plain, ln = true, true, s.ln
		s.port = hideIdleProxy(tb, s.ln.Addr().String())
	case mode.starttls:
		opts.TLSConfig = pki.server
		ln = s.ln
	}
	s.srv = imapserver.New(opts)
	go s.srv.Serve(ln)
	tb.Cleanup(func() { s.srv.Close() })
	return s
}

// hideIdleProxy relays plain-text IMAP to target, removing IDLE from the
// capabilities the server announces, and returns its port.
func hideIdleProxy(tb testing.TB, target string) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { io.Copy(up, c); up.Close() }()
				br := bufio.NewReader(up)
				for {
					line, err := br.ReadBytes('\n')
					if bytes.Contains(line, []byte("CAPABILITY")) {
						line = bytes.ReplaceAll(line, []byte(" IDLE"), nil)
					}
					if _, werr := c.Write(line); werr != nil || err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// appendRaw delivers a message to INBOX as a mail server would.
func (s *imapTestServer) appendRaw(tb testing.TB, raw []byte) imap.UID {
	tb.Helper()
	data, err := s.user.Append("INBOX", literal{bytes.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return data.UID
}

type literal struct {
	*bytes.Reader
	n int64
}

func (l literal) Size() int64 { return l.n }

func (s *imapTestServer) idleCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idles
}

// downloaded reports whether a body of the UID was ever served.
func (s *imapTestServer) downloaded(uid imap.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.bodyFetches {
		if us, ok := set.(imap.UIDSet); ok && us.Contains(uid) {
			return true
		}
	}
	return false
}

// client logs a separate test client in, with INBOX selected.
func (s *imapTestServer) client(tb testing.TB, pki *testPKI, opts *imapclient.Options) (*imapclient.Client, *imap.SelectData) {
	tb.Helper()
	if opts == nil {
		opts = &imapclient.Options{}
	}
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(pki.caFile)
	pool.AppendCertsFromPEM(pem)
	opts.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	dial := imapclient.DialTLS
	if s.plain {
		dial = imapclient.DialInsecure
	}
	c, err := dial(s.ln.Addr().String(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Login(botAddr, botPassword).Wait(); err != nil {
		tb.Fatal(err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c, sel
}

// flags returns each message's flags by UID, as a client sees them.
func (s *imapTestServer) flags(tb testing.TB, pki *testPKI) map[imap.UID][]imap.Flag {
	tb.Helper()
	c, sel := s.client(tb, pki, nil)
	defer c.Close()
	out := map[imap.UID][]imap.Flag{}
	if sel.NumMessages == 0 {
		return out
	}
	msgs, err := c.Fetch(allSeq(), &imap.FetchOptions{UID: true, Flags: true}).Collect()
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range msgs {
		out[m.UID] = m.Flags
	}
	return out
}

func allSeq() imap.SeqSet {
	var s imap.SeqSet
	s.AddRange(1, 0)
	return s
}

func hasFlag(fs []imap.Flag, f imap.Flag) bool {
	for _, x := range fs {
		if strings.EqualFold(string(x), string(f)) {
			return true
		}
	}
	return false
}

type spySession struct {
	imapserver.Session
	srv *imapTestServer
}

func (s *spySession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	s.srv.mu.Lock()
	s.srv.idles++
	s.srv.mu.Unlock()
	select {
	case s.srv.idleCh <- struct{}{}:
	default:
	}
	// Real servers report at the start of IDLE what changed since the last
	// command; go-imap's in-memory server reports only later changes, and a
	// change queued just before IDLE begins waits for the next one. The spy
	// reports them, and looks again every few milliseconds to close that gap.
	for {
		if err := s.Session.Poll(w, true); err != nil {
			return err
		}
		inner := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- s.Session.Idle(w, inner) }()
		var tick <-chan time.Time
		if s.srv.repoll > 0 {
			tick = time.After(s.srv.repoll)
		}
		select {
		case <-stop:
			close(inner)
			return <-done
		case err := <-done:
			return err
		case <-tick:
			close(inner)
			if err := <-done; err != nil {
				return err
			}
		}
	}
}

func (s *spySession) Fetch(w *imapserver.FetchWriter, numSet imap.NumSet, options *imap.FetchOptions) error {
	if len(options.BodySection) > 0 || len(options.BinarySection) > 0 {
		s.srv.mu.Lock()
		s.srv.bodyFetches = append(s.srv.bodyFetches, numSet)
		s.srv.mu.Unlock()
	}
	return s.Session.Fetch(w, numSet, options)
}

func (s *spySession) Move(w *imapserver.MoveWriter, numSet imap.NumSet, dest string) error {
	return s.Session.(imapserver.SessionMove).Move(w, numSet, dest)
}

func (s *spySession) Namespace() (*imap.NamespaceData, error) {
	return s.Session.(imapserver.SessionNamespace).Namespace()
}

// smtpTestServer is a go-smtp server that records what it accepts; respond
// can refuse the n-th DATA (counting from 0).
type smtpTestServer struct {
	ln  *cutListener
	srv *smtp.Server

	mu       sync.Mutex
	mails    []receivedMail
	attempts int
	logins   []string
	respond  func(n int, data []byte) error
	got      chan struct{}
}

type receivedMail struct {
	from string
	to   []string
	data []byte
}

func newSMTPServer(tb testing.TB, pki *testPKI, starttls bool) *smtpTestServer {
	tb.Helper()
	s := &smtpTestServer{ln: newCutListener(tb), got: make(chan struct{}, 1024)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{srv: s}, nil }))
	s.srv.Domain = "smtp.example.test"
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	var ln net.Listener = tls.NewListener(s.ln, pki.server)
	if starttls {
		s.srv.TLSConfig = pki.server
		ln = s.ln
	}
	go s.srv.Serve(ln)
	tb.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *smtpTestServer) received() []receivedMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]receivedMail(nil), s.mails...)
}

func (s *smtpTestServer) setRespond(f func(n int, data []byte) error) {
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

type smtpSession struct {
	srv    *smtpTestServer
	authed bool
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != botAddr || password != botPassword {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		s.srv.mu.Lock()
		s.srv.logins = append(s.srv.logins, username)
		s.srv.mu.Unlock()
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.mu.Lock()
	n := s.srv.attempts
	s.srv.attempts++
	respond := s.srv.respond
	s.srv.mu.Unlock()
	if respond != nil {
		if err := respond(n, data); err != nil {
			return err
		}
	}
	s.srv.mu.Lock()
	s.srv.mails = append(s.srv.mails, receivedMail{from: s.from, to: append([]string(nil), s.to...), data: data})
	s.srv.mu.Unlock()
	select {
	case s.srv.got <- struct{}{}:
	default:
	}
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }
