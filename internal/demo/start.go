package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
	"github.com/agentkit/agentkit/supervisor"
)

// setup makes the repository, the owner's dictionary, the agentkit home
// with its store, and the mail servers.
func (r *runner) setup(ctx context.Context) error {
	if err := makeRepo(ctx, r.repoDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.dict), 0o755); err != nil {
		return fmt.Errorf("writing the owner's dictionary: %w", err)
	}
	if err := os.WriteFile(r.dict, []byte(dictionary()), 0o644); err != nil {
		return fmt.Errorf("writing the owner's dictionary: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, "demo.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the demo's log: %w", err)
	}
	r.logFile = f
	r.log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if r.db, err = state.Open(ctx, filepath.Join(r.home, "state.db")); err != nil {
		return err
	}
	r.store = problems.NewStore(r.db)
	if r.repo, _, err = repos.Register(ctx, r.db, repoName, r.repoDir, time.Now()); err != nil {
		return err
	}
	if err := r.store.SetPhoneEnabled(ctx, true); err != nil {
		return err
	}
	if r.owner, err = newOwner(); err != nil {
		return err
	}
	return nil
}

// start runs the mail servers, the mailbot and the supervisor, and starts the job.
func (r *runner) start(ctx context.Context) error {
	password := randomPassword()
	var err error
	if r.mail, err = startMail(r.mailDir, botAddress, password); err != nil {
		return err
	}
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress = botAddress
	cfg.OwnerAddresses = []string{r.owner.Address}
	// The demo's mail server stands for the bot's provider, whose stamps
	// on the mail it receives count.
	cfg.TrustedAuthservIDs = []string{providerHost}
	if cfg.IMAP, err = loopbackServer(r.mail.IMAPAddr); err != nil {
		return err
	}
	if cfg.SMTP, err = loopbackServer(r.mail.SMTPAddr); err != nil {
		return err
	}
	// Saved for a look with --keep; it never holds the password.
	if err := cfg.Save(mailbot.ConfigPath(r.home)); err != nil {
		return err
	}
	bot, err := mailbot.New(mailbot.Options{
		DB: r.db, Store: r.store, Config: cfg, Password: secrets.NewPassword(password),
		Logger: r.log, LookupTXT: r.owner.LookupTXT,
		StoreWatch:     50 * time.Millisecond,
		ReconnectDelay: func(int) time.Duration { return 100 * time.Millisecond },
	})
	if err != nil {
		return err
	}
	botCtx, botCancel := context.WithCancel(context.WithoutCancel(ctx))
	r.botCancel, r.botDone = botCancel, make(chan struct{})
	go func() {
		defer close(r.botDone)
		r.botErr = bot.Run(botCtx)
	}()

	now := time.Now()
	if _, err := supervisor.CreateJob(ctx, r.db, r.repo, jobName, request, now); err != nil {
		return err
	}
	if _, err := supervisor.StartJobs(ctx, r.db, r.repo, jobName, 0, now); err != nil {
		return err
	}
	sup, err := supervisor.New(supervisor.Config{
		DB: r.db, Repo: r.repo, Env: r.childEnv(), Logger: r.log,
		UntilDone: true, Poll: 100 * time.Millisecond,
		OnEvent: func(e supervisor.Event) {
			r.evMu.Lock()
			r.events = append(r.events, e)
			r.evMu.Unlock()
		},
	})
	if err != nil {
		return err
	}
	supCtx, supCancel := context.WithCancel(context.WithoutCancel(ctx))
	r.supCancel, r.supDone = supCancel, make(chan struct{})
	go func() {
		defer close(r.supDone)
		r.supErr = sup.Run(supCtx)
	}()
	return nil
}

// childEnv is the environment of the builder and the gates: the user's,
// with the demo's agentkit home and the owner's dictionary.
func (r *runner) childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "AGENTKIT_HOME" || k == "SPELL_DICTIONARY" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AGENTKIT_HOME="+r.home, "SPELL_DICTIONARY="+r.dict)
}

// stop ends the supervisor and the bot, stops the mail servers and closes
// the store; the folder stays until Run removes it.
func (r *runner) stop() {
	if r.supCancel != nil {
		r.supCancel()
		<-r.supDone
	}
	if r.botCancel != nil {
		r.botCancel()
		<-r.botDone
	}
	if r.mail != nil {
		r.mail.close()
	}
	if r.db != nil {
		r.db.Close()
	}
	if r.logFile != nil {
		r.logFile.Close()
	}
}

// loopbackServer is a server setting for addr on 127.0.0.1 in plain text,
// which the bot allows only to a loopback address.
func loopbackServer(addr string) (mailbot.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return mailbot.Server{}, fmt.Errorf("reading the demo server's address %s: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return mailbot.Server{}, fmt.Errorf("reading the demo server's port %s: %w", port, err)
	}
	return mailbot.Server{Host: host, Port: p, TLS: mailbot.TLSNone}, nil
}

// randomPassword is the bot's password on the demo's servers, made for this
// run and never shown.
func randomPassword() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
