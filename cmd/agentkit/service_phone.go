package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// phoneUnitState is what the running mailbot unit was started with, and why
// none runs.
type phoneUnitState struct {
	on   bool             // the mailbot unit was started and not stopped since
	conf []byte           // phone.yaml as it was read
	pw   secrets.Password // the password it logs in with
	why  string           // why the mailbot does not run, as last logged
}

// phoneWant is what the mailbot needs, or why it cannot run.
type phoneWant struct {
	conf []byte
	cfg  mailbot.Config
	pw   secrets.Password
	why  string
}

// wantPhone reads phone.yaml, the channel's switch and the password.
func (c *controller) wantPhone(ctx context.Context) phoneWant {
	path := mailbot.ConfigPath(c.home)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return phoneWant{why: "the phone channel is not set up (no " + path + "); run agentkit phone setup"}
	}
	if err != nil {
		return phoneWant{why: "reading the phone settings: " + err.Error()}
	}
	cfg, err := mailbot.ParseConfig(path, data)
	if err != nil {
		return phoneWant{why: "the phone settings cannot be used: " + err.Error()}
	}
	on, err := problems.NewStore(c.db).PhoneEnabled(ctx)
	if err != nil {
		return phoneWant{why: err.Error()}
	}
	if !on {
		return phoneWant{why: "the phone channel is off; agentkit phone enable turns it on"}
	}
	pw, _, err := c.chain().Find(secrets.Phone)
	if err != nil {
		return phoneWant{why: "no phone password: " + err.Error()}
	}
	return phoneWant{conf: data, cfg: cfg, pw: pw}
}

// syncPhone starts the mailbot when the channel can run, restarts it when
// phone.yaml or the password changed, and stops it when the channel cannot
// run; why it does not run is logged once per reason.
func (c *controller) syncPhone(ctx context.Context) {
	w := c.wantPhone(ctx)
	if ctx.Err() != nil {
		return
	}
	ph := &c.ph
	c.mu.Lock()
	c.whyNoBot = w.why
	c.mu.Unlock()
	if w.why != "" {
		if w.why != ph.why {
			c.log.Warn("the mailbot does not run", "reason", w.why)
			ph.why = w.why
		}
		if ph.on {
			c.host.Stop(mailbotUnit)
			*ph = phoneUnitState{why: w.why}
		}
		return
	}
	ph.why = ""
	same := ph.on && bytes.Equal(ph.conf, w.conf) && ph.pw.Reveal() == w.pw.Reveal()
	if same && c.host.Running(mailbotUnit) {
		return
	}
	switch {
	case same:
		c.log.Warn("the mailbot had ended; starting it again")
	case ph.on:
		c.log.Info("the phone settings or password changed; restarting the mailbot")
	default:
		c.log.Info("starting the mailbot", "bot", w.cfg.BotAddress)
	}
	ph.on, ph.conf, ph.pw = true, w.conf, w.pw
	c.host.Restart(c.units, c.mailbotUnit(w.cfg, w.pw))
}

// noMailbot says why the mailbot does not run, or "".
func (c *controller) noMailbot() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.whyNoBot
}

// mailbotUnit runs the phone channel with one reading of phone.yaml.
func (c *controller) mailbotUnit(cfg mailbot.Config, pw secrets.Password) service.Unit {
	return service.Unit{Name: mailbotUnit, Run: func(ctx context.Context) error {
		store := problems.NewStore(c.db)
		// Log tails are cleaned of the password too, not only of token shapes.
		store.Redact = func(s string) string { return mailbot.RedactLog(s, pw.Reveal()) }
		// Supervisors wake the bot themselves when they owe mail (onEvent),
		// so its own watch of the store only has to catch other processes'
		// writes (a foreground supervisor, the CLI): once a second is plenty.
		b, err := c.newBot(mailbot.Options{DB: c.db, Store: store, Config: cfg, Password: pw, Logger: c.log, StoreWatch: time.Second})
		if err != nil {
			return fmt.Errorf("starting the mailbot: %w", err)
		}
		c.mu.Lock()
		c.bot = b
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			if c.bot == b {
				c.bot = nil
			}
			c.mu.Unlock()
		}()
		return b.Run(ctx)
	}}
}
