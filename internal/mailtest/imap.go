package mailtest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/agentkit/agentkit/internal/memimap"
)

// IMAPOptions shape a test IMAP server.
type IMAPOptions struct {
	// TLS protects the connection: implicit TLS, or STARTTLS when StartTLS
	// is set. Nil means plain text (with authentication allowed).
	TLS      *tls.Config
	StartTLS bool
	// NoIdle leaves IDLE out of the capabilities the server announces.
	NoIdle bool
	// Users maps user names to passwords; each gets an INBOX.
	Users map[string]string
}

// IMAP is a running test IMAP server.
type IMAP struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// Mem holds the users and their mailboxes.
	Mem   *imapmemserver.Server
	users map[string]*imapmemserver.User
}

// StartIMAP starts an IMAP server on a free loopback port and stops it when
// the test ends.
func StartIMAP(t testing.TB, o IMAPOptions) *IMAP {
	t.Helper()
	mem := imapmemserver.New()
	s := &IMAP{Mem: mem, users: map[string]*imapmemserver.User{}}
	for name, pw := range o.Users {
		u := imapmemserver.NewUser(name, pw)
		if err := u.Create("INBOX", nil); err != nil {
			t.Fatal(err)
		}
		mem.AddUser(u)
		s.users[name] = u
	}
	caps := imap.CapSet{imap.CapIMAP4rev1: {}}
	opts := &imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			// A real server reports mail appended just before IDLE starts;
			// the in-memory one needs help.
			return &memimap.PromptSession{Session: mem.NewSession()}, nil, nil
		},
		Caps:         caps,
		Logger:       log.New(io.Discard, "", 0),
		InsecureAuth: o.TLS == nil || o.StartTLS,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.TLS != nil {
		if o.StartTLS {
			opts.TLSConfig = o.TLS
			// The STARTTLS connection starts in clear; login is allowed
			// only after the upgrade by real servers, and clients here
			// always upgrade first.
			opts.InsecureAuth = false
		} else {
			ln = tls.NewListener(ln, o.TLS)
			opts.InsecureAuth = true // TLS is underneath; imapserver cannot see it
		}
	}
	if o.NoIdle {
		if o.StartTLS {
			t.Fatal("mailtest: NoIdle cannot hide IDLE inside a STARTTLS connection; use implicit TLS or none")
		}
		// imapserver always offers IDLE to IMAP4rev1 clients; hide it.
		ln = noIdleListener{ln}
	}
	srv := imapserver.New(opts)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.Addr = ln.Addr().String()
	return s
}

// Append adds a raw message to a user's INBOX.
func (s *IMAP) Append(t testing.TB, user string, raw []byte, at time.Time) {
	t.Helper()
	u := s.users[user]
	if u == nil {
		t.Fatalf("mailtest: no IMAP user %q", user)
	}
	if _, err := u.Append("INBOX", literal{strings.NewReader(string(raw)), int64(len(raw))}, &imap.AppendOptions{Time: at}); err != nil {
		t.Fatal(err)
	}
}

type literal struct {
	io.Reader
	n int64
}

func (l literal) Size() int64 { return l.n }

// noIdleListener removes IDLE from the capabilities a server announces.
type noIdleListener struct{ net.Listener }

func (l noIdleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return noIdleConn{c}, nil
}

type noIdleConn struct{ net.Conn }

// Write rewrites capability lines. It leaves TLS records (which start with
// a byte below 0x20) alone, so a STARTTLS upgrade still works.
func (c noIdleConn) Write(b []byte) (int, error) {
	if len(b) == 0 || b[0] < 0x20 {
		return c.Conn.Write(b)
	}
	lines := strings.SplitAfter(string(b), "\r\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "* CAPABILITY ") || strings.Contains(l, "[CAPABILITY ") {
			lines[i] = strings.Replace(l, " IDLE", "", 1)
		}
	}
	if _, err := c.Conn.Write([]byte(strings.Join(lines, ""))); err != nil {
		return 0, err
	}
	return len(b), nil
}
