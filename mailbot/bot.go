package mailbot

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// Dialer opens TCP connections to the mail servers.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultStoreWatch is how often the store is checked for new owed mail
// (PRAGMA data_version on a dedicated connection: cheap, and no busy loop).
const DefaultStoreWatch = 250 * time.Millisecond

// Options configure a Bot. DB, Config and Password are required; the rest
// have defaults.
type Options struct {
	// DB is the state store.
	DB *state.DB
	// Store is the problems store over DB; nil makes one.
	Store *problems.Store
	// Config is the validated phone.yaml.
	Config Config
	// Password logs in to both servers.
	Password secrets.Password
	// Logger receives the bot's log; nil discards it.
	Logger *slog.Logger
	// Now is the clock for retries, the answer cap and the store; nil is time.Now.
	Now func() time.Time
	// Dialer connects to the servers; nil is a net.Dialer with a 30s timeout.
	Dialer Dialer
	// LookupTXT resolves DKIM keys; nil uses Config.DNSServer or the system.
	LookupTXT LookupTXTFunc
	// Rand draws Message-IDs; nil is crypto/rand.
	Rand io.Reader
	// IdleRestart is how often IDLE is restarted (default 9 minutes).
	IdleRestart time.Duration
	// CommandTimeout bounds each IMAP command (default 2 minutes).
	CommandTimeout time.Duration
	// ReconnectDelay is the wait before the n-th consecutive reconnect
	// (default DefaultReconnectDelay).
	ReconnectDelay func(n int) time.Duration
	// StoreWatch is how often the store is checked for new owed mail
	// (default DefaultStoreWatch).
	StoreWatch time.Duration
}

// Bot sends the outbox and watches the mailbox: the whole phone channel.
type Bot struct {
	db     *state.DB
	cfg    Config
	log    *slog.Logger
	send   *sender
	watch  *watcher
	proc   *processor
	every  time.Duration
	mu     sync.Mutex
	active bool
}

// New checks the options and builds a bot; Run starts it.
func New(o Options) (*Bot, error) {
	if o.DB == nil {
		return nil, errors.New("mailbot: no state store")
	}
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("phone settings: %w", err)
	}
	if o.Password.IsZero() {
		return nil, fmt.Errorf("no phone password: set %s or run agentkit phone setup", secrets.EnvPhonePassword)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Store == nil {
		o.Store = problems.NewStore(o.DB)
		o.Store.Now = o.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Dialer == nil {
		o.Dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.IdleRestart <= 0 {
		o.IdleRestart = DefaultIdleRestart
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.ReconnectDelay == nil {
		o.ReconnectDelay = DefaultReconnectDelay
	}
	if o.StoreWatch <= 0 {
		o.StoreWatch = DefaultStoreWatch
	}
	b := &Bot{db: o.DB, cfg: o.Config, log: o.Logger.With(slog.String("component", "mailbot")), every: o.StoreWatch}
	cfg := &b.cfg
	known := []string{o.Password.Reveal()}
	comp := &composer{db: o.DB, store: o.Store, cfg: cfg, now: o.Now, rand: o.Rand, known: known}
	b.send = &sender{db: o.DB, cfg: cfg, pw: o.Password, comp: comp, dial: o.Dialer, now: o.Now, log: b.log.With(slog.String("part", "sender")), wake: make(chan struct{}, 1)}
	b.proc = &processor{db: o.DB, store: o.Store, cfg: cfg, now: o.Now, stmts: newStmtCache(o.DB.DB), log: b.log.With(slog.String("part", "inbound")), owed: b.send.signal}
	b.proc.decide = newVerdictDecider(o, b.proc)
	b.watch = &watcher{db: o.DB, cfg: cfg, pw: o.Password, dial: o.Dialer, proc: b.proc, log: b.log.With(slog.String("part", "watcher")), now: o.Now,
		key:  mailboxKey{account: fmt.Sprintf("%s on %s", cfg.IMAP.Username, cfg.IMAP.Addr()), mailbox: inboxName},
		wake: make(chan struct{}, 1), idleRestart: o.IdleRestart, cmdTimeout: o.CommandTimeout, reconnect: o.ReconnectDelay}
	return b, nil
}

// Run sends owed mail and watches the mailbox until ctx ends; it returns
// nil then. Servers that cannot be reached are retried for ever.
func (b *Bot) Run(ctx context.Context) error {
	b.mu.Lock()
	if b.active {
		b.mu.Unlock()
		return errors.New("mailbot: the bot is already running")
	}
	b.active = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.active = false
		b.mu.Unlock()
	}()
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening a connection to watch the state store: %w", err)
	}
	defer conn.Close()
	b.log.Info("phone channel running", slog.String("bot", b.cfg.BotAddress), slog.String("imap", b.cfg.IMAP.Addr()), slog.String("smtp", b.cfg.SMTP.Addr()))
	var wg sync.WaitGroup
	wg.Go(func() { b.send.run(ctx) })
	wg.Go(func() { b.watch.run(ctx) })
	wg.Go(func() { b.watchStore(ctx, conn) })
	wg.Wait()
	b.log.Info("phone channel stopped")
	return nil
}

// watchStore wakes the sender when another connection commits (a problem
// created, a decision applied), by polling SQLite's data_version.
func (b *Bot) watchStore(ctx context.Context, conn *sql.Conn) {
	last, err := b.db.DataVersion(ctx, conn)
	if err != nil && ctx.Err() == nil {
		b.log.Error("watching the state store", slog.Any("error", err))
	}
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := b.db.DataVersion(ctx, conn)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Error("watching the state store", slog.Any("error", err))
			}
			continue
		}
		if v != last {
			last = v
			b.send.signal()
		}
	}
}

// Wake asks the running bot to send due mail and look at the mailbox now.
func (b *Bot) Wake() {
	b.send.signal()
	b.watch.signal()
}

// SendPending runs one delivery pass now, trying every waiting message
// whatever its backoff (answers over the hourly cap still wait). It is
// `agentkit phone send-pending` when no service runs, and can run beside
// Run: passes never overlap.
func (b *Bot) SendPending(ctx context.Context) (Delivery, error) {
	return b.send.pass(ctx, true)
}
