package mailtest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPOptions shape a test SMTP server.
type SMTPOptions struct {
	// TLS protects the connection: implicit TLS, or STARTTLS when StartTLS
	// is set. Nil means plain text (with authentication allowed).
	TLS      *tls.Config
	StartTLS bool
	// Users maps user names to passwords accepted by AUTH PLAIN and LOGIN.
	Users map[string]string
	// NoAuth leaves AUTH out of the extensions.
	NoAuth bool
}

// Message is one message the SMTP server accepted.
type Message struct {
	User string
	From string
	To   []string
	Data []byte
}

// SMTP is a running test SMTP server.
type SMTP struct {
	// Addr is 127.0.0.1:port.
	Addr string

	mu       sync.Mutex
	messages []Message
	arrived  chan struct{}
}

// StartSMTP starts an SMTP server on a free loopback port and stops it when
// the test ends.
func StartSMTP(t testing.TB, o SMTPOptions) *SMTP {
	t.Helper()
	s := &SMTP{arrived: make(chan struct{}, 1)}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{srv: s, opts: &o}, nil
	}))
	srv.Domain = "mx.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.AllowInsecureAuth = o.TLS == nil
	if o.TLS != nil {
		if o.StartTLS {
			srv.TLSConfig = o.TLS
		} else {
			ln = tls.NewListener(ln, o.TLS)
			srv.AllowInsecureAuth = true // TLS is underneath; go-smtp cannot see it
		}
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.Addr = ln.Addr().String()
	return s
}

// Messages returns what was accepted so far.
func (s *SMTP) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// WaitMessages waits until at least n messages arrived, failing the test at
// the deadline.
func (s *SMTP) WaitMessages(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.arrived:
		case <-deadline.C:
			t.Fatalf("mailtest: %d messages arrived within %s, want %d", len(s.Messages()), timeout, n)
		}
	}
}

type smtpSession struct {
	srv  *SMTP
	opts *SMTPOptions
	user string
	msg  Message
}

func (s *smtpSession) AuthMechanisms() []string {
	if s.opts.NoAuth {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, pw string) error {
		if want, ok := s.opts.Users[user]; !ok || want != pw {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pw string) error { return check(user, pw) }), nil
	case sasl.Login:
		return newLoginServer(check), nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" && !s.opts.NoAuth {
		return smtp.ErrAuthRequired
	}
	s.msg = Message{User: s.user, From: from}
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Data = b
	s.srv.mu.Lock()
	s.srv.messages = append(s.srv.messages, s.msg)
	s.srv.mu.Unlock()
	select {
	case s.srv.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (s *smtpSession) Reset()        { s.msg = Message{} }
func (s *smtpSession) Logout() error { return nil }

var _ smtp.AuthSession = (*smtpSession)(nil)

// loginServer is the server side of the LOGIN mechanism, which go-sasl only
// ships as a client.
type loginServer struct {
	check func(user, pw string) error
	step  int
	user  string
}

func newLoginServer(check func(user, pw string) error) *loginServer {
	return &loginServer{check: check}
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step++
		if len(resp) > 0 {
			l.user = string(resp)
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.user = string(resp)
		l.step++
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(l.user, string(resp))
	}
}
