package mailbot_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/internal/realmail"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// realWorld is the mailbot against Dovecot and Postfix (internal/realmail).
type realWorld struct {
	t     *testing.T
	s     *realmail.Servers
	db    *state.DB
	store *problems.Store
	cfg   mailbot.Config
	keys  *mailtest.DKIM
	log   *logBuffer

	cancel context.CancelFunc
	done   chan error
}

func newRealWorld(t *testing.T) *realWorld {
	t.Helper()
	s := realmail.Start(t)
	db, err := state.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := &realWorld{t: t, s: s, db: db, store: problems.NewStore(db), keys: mailtest.NewDKIM(), log: &logBuffer{}}
	if err := w.store.SetPhoneEnabled(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress, cfg.OwnerAddresses = s.Bot.Address, []string{s.Owner.Address}
	cfg.IMAP = mailbot.Server{Host: "127.0.0.1", Port: portOf(t, s.IMAPAddr), TLS: mailbot.TLSStartTLS, CAFile: s.CAFile}
	cfg.SMTP = mailbot.Server{Host: "127.0.0.1", Port: portOf(t, s.SMTPAddr), TLS: mailbot.TLSStartTLS, CAFile: s.CAFile}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w.cfg = cfg
	// The owner's provider signs for owner.test; the key exists before any reply.
	w.keys.Sign(t, mailtest.CRLF("From: "+s.Owner.Address+"\n\nx\n"), "owner.test", "s1", "From")
	return w
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// startBot runs a new bot (a fresh IMAP connection, state from the store).
func (w *realWorld) startBot() {
	w.t.Helper()
	b, err := mailbot.New(mailbot.Options{DB: w.db, Store: w.store, Config: w.cfg, Password: secrets.NewPassword(w.s.Bot.Password),
		Logger: slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})), LookupTXT: w.keys.LookupTXT, ReconnectDelay: func(int) time.Duration { return 200 * time.Millisecond }})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan error, 1)
	go func() { w.done <- b.Run(ctx) }()
	w.t.Cleanup(w.stopBot)
}

func (w *realWorld) stopBot() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	if err := <-w.done; err != nil {
		w.t.Errorf("the bot: %v", err)
	}
	w.cancel = nil
}

// waitFor polls cond, failing with the bot's log and the servers' logs.
func (w *realWorld) waitFor(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s\nbot log:\n%s\nservers:\n%s", what, w.log.String(), w.s.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *realWorld) mailbox() mailbot.MailboxState {
	w.t.Helper()
	mb, err := mailbot.MailboxStates(context.Background(), w.db)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(mb) != 1 {
		return mailbot.MailboxState{}
	}
	return mb[0]
}

// inbox returns a user's INBOX as Dovecot has it.
func (w *realWorld) inbox(u realmail.User) []realmail.Message {
	w.t.Helper()
	msgs, err := w.s.Messages(u, "INBOX")
	if err != nil {
		w.t.Fatal(err)
	}
	return msgs
}

// problemEmail waits for the problem's email in the owner's INBOX.
func (w *realWorld) problemEmail(code problems.Code) parsed {
	w.t.Helper()
	var found parsed
	w.waitFor("the email of "+string(code)+" in the owner's INBOX", func() bool {
		for _, m := range w.inbox(w.s.Owner) {
			p := parseMail(w.t, m.Raw)
			if subj := p.header.Get("Subject"); strings.Contains(subj, string(code)) && !strings.HasPrefix(subj, "Re:") {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// reply delivers the owner's DKIM-signed answer to the bot's INBOX over
// LMTP, as Postfix would after receiving it from the owner's provider.
func (w *realWorld) reply(to parsed, words string) string {
	w.t.Helper()
	mid := fmt.Sprintf("%d.reply@owner.test", time.Now().UnixNano())
	orig := to.header.Get("Message-Id")
	raw := mailtest.CRLF(fmt.Sprintf("From: Owner <%s>\nTo: <%s>\nSubject: Re: %s\nDate: %s\nMessage-ID: <%s>\nIn-Reply-To: %s\nReferences: %s\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n%s\n\nOn a day, agentkit wrote:\n> the problem\n",
		w.s.Owner.Address, w.s.Bot.Address, to.header.Get("Subject"), time.Now().Format(time.RFC1123Z), mid, orig, orig, words))
	raw = w.keys.Sign(w.t, raw, "owner.test", "s1", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
	if err := w.s.Deliver(w.s.Owner.Address, w.s.Bot.Address, raw); err != nil {
		w.t.Fatal(err)
	}
	return mid
}

func (w *realWorld) decided(code problems.Code) *problems.Decision {
	w.t.Helper()
	p, err := w.store.Get(context.Background(), code)
	if err != nil {
		w.t.Fatal(err)
	}
	return p.Decision
}

func (w *realWorld) newProblem(summary string) problems.Code {
	w.t.Helper()
	code, err := w.store.Create(context.Background(), problems.New{Repo: "shop", Job: "j1", Task: "t1", Kind: problems.GateFailed, Summary: summary,
		Detail: "The task gate failed.", LogTail: "FAIL TestLogin"})
	if err != nil {
		w.t.Fatal(err)
	}
	return code
}

// TestRealServers runs the mailbot against Dovecot and Postfix: SMTP
// submission with STARTTLS and AUTH delivering into the owner's mailbox,
// IMAP login with STARTTLS, IDLE, the processed keyword, and UIDs kept
// across a Dovecot restart and a bot restart, so nothing is read twice or
// missed. It skips, saying why, where the servers are not installed.
func TestRealServers(t *testing.T) {
	w := newRealWorld(t)
	w.startBot()
	w.waitFor("the bot to be in IDLE", func() bool { m := w.mailbox(); return m.IdleInUse && !m.LastReached.IsZero() })
	validity := w.mailbox().UIDValidity

	// A problem: submitted to Postfix with AUTH, delivered by Postfix into
	// the owner's INBOX at Dovecot.
	first := w.newProblem("gate fast failed: 2 tests")
	mail1 := w.problemEmail(first)
	if got := mail1.header.Get("Auto-Submitted"); got != "auto-generated" {
		t.Errorf("Auto-Submitted: %q", got)
	}

	// The owner's reply reaches the bot's INBOX; IDLE tells the bot at once.
	reply1 := w.reply(mail1, "retry")
	w.waitFor("the reply to be decided", func() bool { return w.decided(first) != nil })
	if d := w.decided(first); d.Reply != problems.Retry || d.Channel != problems.Email || !strings.Contains(d.SourceID, reply1) {
		t.Fatalf("decision %+v", d)
	}
	// Marked on the server only after the decision was stored: \Seen and the keyword.
	w.waitFor("the reply to carry the processed keyword", func() bool {
		for _, m := range w.inbox(w.s.Bot) {
			if strings.Contains(string(m.Raw), reply1) {
				return slices.Contains(m.Flags, imap.FlagSeen) && slices.Contains(m.Flags, imap.Flag(w.cfg.ProcessedKeyword))
			}
		}
		return false
	})
	lastUID := w.mailbox().LastUID

	// Dovecot restarts: the bot reconnects by itself, and the next reply
	// (a new UID) is read while the old one is not read again.
	w.s.RestartIMAP(t)
	w.waitFor("the bot to reconnect", func() bool { return strings.Contains(w.log.String(), "the mailbox is reachable again") })
	// Postfix authenticates through Dovecot: its first AUTH after the
	// restart may fail with "454 Temporary authentication failure:
	// Connection lost to authentication server". The bot must take that as
	// temporary and send again (30 seconds later), never give the email up.
	second := w.newProblem("gate fast failed: lint")
	mail2 := w.problemEmail(second)
	if strings.Contains(w.log.String(), "SMTP error 454") && !strings.Contains(w.log.String(), "the SMTP server can be used again") {
		t.Errorf("a temporary AUTH failure was not retried:\n%s", w.log.String())
	}
	reply2 := w.reply(mail2, "skip")
	w.waitFor("the reply after the restart to be decided", func() bool { return w.decided(second) != nil })
	if d := w.decided(second); d.Reply != problems.Skip || !strings.Contains(d.SourceID, reply2) {
		t.Fatalf("decision %+v", d)
	}
	w.waitFor("the mailbox's last UID to move on", func() bool { return w.mailbox().LastUID > lastUID })
	if mb := w.mailbox(); mb.UIDValidity != validity {
		t.Errorf("UIDVALIDITY changed across the restart: %d → %d", validity, mb.UIDValidity)
	}

	// The bot itself restarts; a reply that arrived meanwhile is read, and
	// only it.
	w.stopBot()
	third := w.newProblem("gate fast failed: vet")
	w.startBot()
	mail3 := w.problemEmail(third)
	w.stopBot()
	reply3 := w.reply(mail3, "hint use the v2 API")
	w.startBot()
	w.waitFor("the reply read after the bot's restart to be decided", func() bool { return w.decided(third) != nil })
	if d := w.decided(third); d.Reply != problems.Hint || d.Words != "use the v2 API" || !strings.Contains(d.SourceID, reply3) {
		t.Fatalf("decision %+v", d)
	}
	var inbound int
	if err := w.db.QueryRow("SELECT count(*) FROM inbound").Scan(&inbound); err != nil {
		t.Fatal(err)
	}
	if inbound != 3 {
		t.Errorf("%d inbound messages judged, want the 3 replies once each", inbound)
	}

	// Postfix stops: owed mail waits, and goes out once it is back.
	w.s.StopSMTP(t)
	fourth := w.newProblem("gate fast failed: race")
	w.waitFor("the bot to find the SMTP server down", func() bool {
		var attempts int
		var last string
		if err := w.db.QueryRow("SELECT count(*), coalesce(max(last_error), '') FROM outbox o JOIN problems p ON p.id = o.problem_id WHERE p.code = ? AND o.state = 'pending' AND o.last_error <> ''", string(fourth)).Scan(&attempts, &last); err != nil {
			t.Fatal(err)
		}
		return attempts == 1
	})
	w.s.StartSMTP(t)
	b, err := mailbot.New(mailbot.Options{DB: w.db, Store: w.store, Config: w.cfg, Password: secrets.NewPassword(w.s.Bot.Password), LookupTXT: w.keys.LookupTXT})
	if err != nil {
		t.Fatal(err)
	}
	// What agentkit phone send-pending does, instead of waiting out the backoff.
	if d, err := b.SendPending(context.Background()); err != nil || d.Sent < 1 {
		t.Fatalf("send-pending: %+v %v", d, err)
	}
	w.problemEmail(fourth)
	counts := map[string]int{}
	for _, m := range w.inbox(w.s.Owner) {
		p := parseMail(t, m.Raw)
		counts[p.header.Get("Message-Id")]++
	}
	for id, n := range counts {
		if n != 1 {
			t.Errorf("the owner received %s %d times", id, n)
		}
	}
}
