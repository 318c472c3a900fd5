package demo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agentkit/agentkit/internal/memimap"
)

// mailServers are the demo's own mail servers on 127.0.0.1: an IMAP server
// (go-imap's in-memory server) holding the bot's mailbox, and an SMTP server
// (go-smtp) that takes the bot's mail for the owner and "delivers" it to the
// owner's phone, which here is a folder of .eml files.
type mailServers struct {
	IMAPAddr, SMTPAddr string

	user, password string
	imapSrv        *imapserver.Server
	smtpSrv        *smtp.Server
	bot            *imapmemserver.User
	phoneDir       string // what the owner's phone received
	inboxDir       string // what reached the bot's mailbox

	mu       sync.Mutex
	received []delivered
	appended int
	arrived  chan struct{} // a token after each delivery
}

// delivered is one message the SMTP server accepted.
type delivered struct {
	From string
	To   []string
	Data []byte
	File string // where it was written
}

// startMail starts both servers on free loopback ports for one account
// (user, password): the bot's. Mail is written under dir.
func startMail(dir, user, password string) (*mailServers, error) {
	m := &mailServers{user: user, password: password, arrived: make(chan struct{}, 1),
		phoneDir: filepath.Join(dir, "phone"), inboxDir: filepath.Join(dir, "bot-inbox")}
	for _, d := range []string{m.phoneDir, m.inboxDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("making the demo's mail folders: %w", err)
		}
	}
	if err := m.startIMAP(); err != nil {
		return nil, err
	}
	if err := m.startSMTP(); err != nil {
		m.imapSrv.Close()
		return nil, err
	}
	return m, nil
}

func (m *mailServers) startIMAP() error {
	mem := imapmemserver.New()
	m.bot = imapmemserver.NewUser(m.user, m.password)
	if err := m.bot.Create("INBOX", nil); err != nil {
		return fmt.Errorf("making the bot's mailbox: %w", err)
	}
	mem.AddUser(m.bot)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the demo's IMAP server on 127.0.0.1: %w", err)
	}
	m.imapSrv = imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &memimap.PromptSession{Session: mem.NewSession()}, nil, nil
		},
		Caps:   imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIdle: {}},
		Logger: log.New(io.Discard, "", 0),
		// Plain text is fine here: the server listens on loopback only,
		// and the bot's tls: none is allowed only to a loopback address.
		InsecureAuth: true,
	})
	go m.imapSrv.Serve(ln)
	m.IMAPAddr = ln.Addr().String()
	return nil
}

func (m *mailServers) startSMTP() error {
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &smtpSession{m: m}, nil
	}))
	srv.Domain = "mail.demo.example"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.AllowInsecureAuth = true // loopback only, as above
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the demo's SMTP server on 127.0.0.1: %w", err)
	}
	m.smtpSrv = srv
	go srv.Serve(ln)
	m.SMTPAddr = ln.Addr().String()
	return nil
}

// close stops both servers.
func (m *mailServers) close() {
	m.smtpSrv.Close()
	m.imapSrv.Close()
}

// Received returns what the SMTP server accepted so far, oldest first.
func (m *mailServers) Received() []delivered {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]delivered(nil), m.received...)
}

// Arrived is signalled after each delivery.
func (m *mailServers) Arrived() <-chan struct{} { return m.arrived }

// providerHost is the bot's mail provider's receiving host, which stamps
// the mail it receives for the bot; phone.yaml trusts its stamps.
const providerHost = "mx.bot.example"

// Deliver puts a message into the bot's INBOX as the bot's mail provider
// would on receiving it from the host sender: with its Received header and
// its Authentication-Results (authres, the results after the authserv-id).
// It keeps a copy as an .eml file.
func (m *mailServers) Deliver(raw []byte, name, sender, authres string) error {
	now := time.Now()
	stamp := fmt.Sprintf("Authentication-Results: %s; %s\r\nReceived: from %s (%s [192.0.2.25])\r\n\tby %s with ESMTPS id %s;\r\n\t%s\r\n",
		providerHost, authres, sender, sender, providerHost, randomID()[:10], now.Format(time.RFC1123Z))
	raw = append([]byte(stamp), raw...)
	m.mu.Lock()
	m.appended++
	n := m.appended
	m.mu.Unlock()
	file := filepath.Join(m.inboxDir, fmt.Sprintf("%02d-%s.eml", n, name))
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		return fmt.Errorf("keeping a copy of the reply: %w", err)
	}
	_, err := m.bot.Append("INBOX", literal{bytes.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{Time: now})
	if err != nil {
		return fmt.Errorf("delivering the reply to the bot's mailbox: %w", err)
	}
	return nil
}

func (m *mailServers) accept(d delivered) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d.File = filepath.Join(m.phoneDir, fmt.Sprintf("%02d.eml", len(m.received)+1))
	if err := os.WriteFile(d.File, d.Data, 0o600); err != nil {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "cannot store the message now"}
	}
	m.received = append(m.received, d)
	select {
	case m.arrived <- struct{}{}:
	default:
	}
	return nil
}

type literal struct {
	*bytes.Reader
	n int64
}

func (l literal) Size() int64 { return l.n }

// smtpSession takes mail only from the bot's account, after AUTH PLAIN.
type smtpSession struct {
	m      *mailServers
	authed bool
	msg    delivered
}

var _ smtp.AuthSession = (*smtpSession)(nil)

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, user, pw string) error {
		if user != s.m.user || pw != s.m.password {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.msg = delivered{From: from}
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(s.msg.To) == 0 {
		return errors.New("no recipient")
	}
	s.msg.Data = data
	return s.m.accept(s.msg)
}

func (s *smtpSession) Reset()        { s.msg = delivered{} }
func (s *smtpSession) Logout() error { return nil }
