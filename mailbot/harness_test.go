package mailbot_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// fakeClock is the bot's clock in tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logBuffer collects log records so tests can count them.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// count returns how many records hold all the given substrings.
func (l *logBuffer) count(subs ...string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// ownerKey signs the owner's replies as owner.test's mail provider would.
var ownerKey = func() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
}()

const ownerSelector = "phone"

// fakeDNS publishes the owner's DKIM key and nothing else.
func fakeDNS(name string) ([]string, error) {
	if name == ownerSelector+"._domainkey.owner.test" {
		pub := ownerKey.Public().(ed25519.PublicKey)
		return []string{"v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// harness is a bot with its own store, clock and loopback servers.
type harness struct {
	t     testing.TB
	pki   *testPKI
	db    *state.DB
	store *problems.Store
	cfg   mailbot.Config
	imap  *imapTestServer
	smtp  *smtpTestServer
	clock *fakeClock
	logs  *logBuffer

	bot    *mailbot.Bot
	cancel context.CancelFunc
	done   chan struct{}
	// hook runs after each stored verdict, before marking (see SetAfterStore).
	hook func(uid uint32)
	// idleRestart overrides the IDLE restart interval when set.
	idleRestart time.Duration
	// storeWatch overrides the store polling interval (default 10ms here).
	storeWatch time.Duration
	// password overrides the bot's password when set.
	password string
	// dnsDown makes every DKIM key lookup fail temporarily.
	dnsDown atomic.Bool
}

// lookupTXT is fakeDNS, unless the test took DNS down.
func (h *harness) lookupTXT(name string) ([]string, error) {
	if h.dnsDown.Load() {
		return nil, &net.DNSError{Err: "server misbehaving", Name: name, IsTemporary: true}
	}
	return fakeDNS(name)
}

type harnessOptions struct {
	// imap defaults to implicit TLS with IDLE.
	imap         *imapMode
	smtpStartTLS bool
	phoneOff     bool
	configure    func(*mailbot.Config)
}

func newHarness(tb testing.TB, o harnessOptions) *harness {
	tb.Helper()
	if o.imap == nil {
		o.imap = &imapMode{idle: true}
	}
	h := &harness{t: tb, pki: newPKI(tb), clock: newClock(), logs: &logBuffer{}}
	tb.Cleanup(func() {
		if strings.Contains(h.logs.String(), botPassword) {
			tb.Error("the password reached the log")
		}
		if tb.Failed() {
			tb.Logf("bot log:\n%s", h.logs)
		}
	})
	var err error
	h.db, err = state.Open(context.Background(), filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.db.Close() })
	h.store = problems.NewStore(h.db)
	h.store.Now = h.clock.Now
	if _, _, err := repos.Register(context.Background(), h.db, "demo", tb.TempDir(), h.clock.Now()); err != nil {
		tb.Fatal(err)
	}
	if err := h.store.SetPhoneEnabled(context.Background(), !o.phoneOff); err != nil {
		tb.Fatal(err)
	}
	h.imap = newIMAPServer(tb, h.pki, *o.imap)
	h.smtp = newSMTPServer(tb, h.pki, o.smtpStartTLS)
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress = botAddr
	cfg.OwnerAddresses = []string{ownerAddr}
	cfg.IMAP = mailbot.Server{Host: "127.0.0.1", Port: h.imap.port, TLS: mailbot.TLSImplicit, CAFile: h.pki.caFile}
	switch {
	case h.imap.plain:
		cfg.IMAP.TLS = mailbot.TLSNone
	case o.imap.starttls:
		cfg.IMAP.TLS = mailbot.TLSStartTLS
	}
	cfg.SMTP = mailbot.Server{Host: "127.0.0.1", Port: h.smtp.ln.port(), TLS: mailbot.TLSImplicit, CAFile: h.pki.caFile}
	if o.smtpStartTLS {
		cfg.SMTP.TLS = mailbot.TLSStartTLS
	}
	cfg.PollInterval = mailbot.Duration(5 * time.Second)
	if o.configure != nil {
		o.configure(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	h.cfg = cfg
	return h
}

// newBot builds a bot over the harness (not started).
func (h *harness) newBot() *mailbot.Bot {
	h.t.Helper()
	b, err := mailbot.New(mailbot.Options{
		DB: h.db, Store: h.store, Config: h.cfg, Password: secrets.NewPassword(cmp.Or(h.password, botPassword)),
		Logger:    slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:       h.clock.Now,
		LookupTXT: h.lookupTXT,
		// Reconnects are immediate in tests; waits are on conditions.
		ReconnectDelay: func(int) time.Duration { return 5 * time.Millisecond },
		CommandTimeout: 10 * time.Second,
		StoreWatch:     cmp.Or(h.storeWatch, 10*time.Millisecond),
		IdleRestart:    h.idleRestart,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if h.hook != nil {
		mailbot.SetAfterStore(b, h.hook)
	}
	return b
}

// start runs a new bot until stop (or the test's end).
func (h *harness) start() {
	h.t.Helper()
	h.bot = h.newBot()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	bot, done := h.bot, h.done
	go func() {
		defer close(done)
		if err := bot.Run(ctx); err != nil {
			h.t.Errorf("Run: %v", err)
		}
	}()
	h.t.Cleanup(h.stop)
}

// stop ends the running bot and waits for it.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		h.t.Fatal("the bot did not stop within 30s")
	}
	h.cancel = nil
}

// eventually waits for cond, failing the test after a generous deadline.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (h *harness) count(query string, args ...any) int {
	h.t.Helper()
	var n int
	if err := h.db.QueryRow(query, args...).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) newProblem(summary string) problems.Code {
	h.t.Helper()
	code, err := h.store.Create(context.Background(), problems.New{
		Repo: "demo", Job: "add-login", Task: "api-tests", Kind: problems.GateFailed,
		Summary: summary, Detail: "The fast gate (go test ./...) failed twice in the same way after two automatic retries.",
		LogTail: "--- FAIL: TestLogin (0.01s)\n    login_test.go:42: got 401, want 200\nFAIL\n",
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return code
}

// problemMessageID waits for the problem's email to be sent and returns its
// Message-ID.
func (h *harness) problemMessageID(code problems.Code) string {
	h.t.Helper()
	var id string
	eventually(h.t, "the problem email of "+string(code), func() bool {
		err := h.db.QueryRow(`SELECT o.message_id FROM outbox o JOIN problems p ON p.id = o.problem_id
			WHERE p.code = ? AND o.kind = 'problem' AND o.state = 'sent'`, code).Scan(&id)
		return err == nil && id != ""
	})
	return id
}

func (h *harness) decision(code problems.Code) *problems.Decision {
	h.t.Helper()
	p, err := h.store.Get(context.Background(), code)
	if err != nil {
		h.t.Fatal(err)
	}
	return p.Decision
}

// mailCount returns how many emails the SMTP server accepted.
func (h *harness) mailCount() int { return len(h.smtp.received()) }

// settle runs a forced delivery pass (agentkit phone send-pending) and
// reports what it did: after it, nothing that may be sent is left unsent.
func (h *harness) settle() mailbot.Delivery {
	h.t.Helper()
	d, err := h.bot.SendPending(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// deliverDue runs the pass the bot runs on its own, which respects backoffs.
func (h *harness) deliverDue() mailbot.Delivery {
	h.t.Helper()
	d, err := mailbot.DeliverDue(context.Background(), h.bot)
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// message builds a raw CRLF message from header lines and a body.
func message(headers []string, body string) []byte {
	var b bytes.Buffer
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n"))
	return b.Bytes()
}

var msgSeq atomic.Int64

// newMessageID draws a unique Message-ID at the owner's provider.
func newMessageID() string {
	return fmt.Sprintf("reply.%d.%d@mail.owner.test", time.Now().UnixNano(), msgSeq.Add(1))
}

// replyOpts describe one reply from the owner's phone.
type replyOpts struct {
	from, subject, body, messageID string
	inReplyTo                      string
	date                           time.Time
	unsigned                       bool
	extra                          []string
}

// reply builds the owner's reply, DKIM-signed for owner.test unless unsigned.
func (h *harness) reply(tb testing.TB, o replyOpts) []byte {
	tb.Helper()
	if o.from == "" {
		o.from = "Owner <" + ownerAddr + ">"
	}
	if o.messageID == "" {
		o.messageID = newMessageID()
	}
	if o.date.IsZero() {
		o.date = h.clock.Now().Add(-time.Minute)
	}
	headers := []string{
		"From: " + o.from,
		"To: agentkit <" + botAddr + ">",
		"Subject: " + o.subject,
		"Date: " + o.date.Format(time.RFC1123Z),
		"Message-ID: <" + o.messageID + ">",
	}
	if o.inReplyTo != "" {
		headers = append(headers, "In-Reply-To: <"+o.inReplyTo+">", "References: <"+o.inReplyTo+">")
	}
	headers = append(headers, "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8")
	headers = append(headers, o.extra...)
	raw := message(headers, o.body)
	if o.unsigned {
		return raw
	}
	return signOwner(tb, raw)
}

func signOwner(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	err := dkim.Sign(&out, bytes.NewReader(raw), &dkim.SignOptions{
		Domain: "owner.test", Selector: ownerSelector, Signer: ownerKey,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed, BodyCanonicalization: dkim.CanonicalizationRelaxed,
		HeaderKeys: []string{"From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References", "MIME-Version", "Content-Type"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// answerTo is the owner's signed reply to a problem email, as a phone
// writes it: the word on top, the quoted original below.
func (h *harness) answerTo(tb testing.TB, code problems.Code, problemMID, words string) []byte {
	return h.reply(tb, replyOpts{
		subject:   "Re: [agentkit] " + string(code) + " demo: gate failed",
		inReplyTo: problemMID,
		body:      words + "\n\nOn Mon, 1 Jan 2024 at 10:00, agentkit <" + botAddr + "> wrote:\n> agentkit stopped work in demo and needs your answer.\n> Reply with one of:\n",
	})
}
