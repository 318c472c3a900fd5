package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

func (w *phoneWorld) store() (*problems.Store, *state.DB) {
	w.t.Helper()
	db, err := state.Open(context.Background(), filepath.Join(w.home, "state.db"))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { db.Close() })
	return problems.NewStore(db), db
}

func (w *phoneWorld) problem(s *problems.Store, summary string) problems.Code {
	w.t.Helper()
	c, err := s.Create(context.Background(), problems.New{Repo: "shop", Kind: problems.GateFailed, Summary: summary})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func TestPhoneDisableEnableSendPending(t *testing.T) {
	w := newPhoneWorld(t)
	ctx := context.Background()
	ios := w.ios("")
	if err := phoneChannelRun(ctx, ios, true); err == nil || !strings.Contains(err.Error(), "run agentkit phone setup") {
		t.Fatalf("enable before setup: %v", err)
	}
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--no-verify"}, w.serverFlags()...)
	if err := w.setup(w.deps(nil), testPassword, args...); err != nil {
		t.Fatal(err)
	}
	s, db := w.store()
	w.problem(s, "while on")

	if err := phoneChannelRun(ctx, w.ios(""), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.out.String(), "The phone channel is off") || !strings.Contains(w.out.String(), "Settings are kept") {
		t.Errorf("disable: %s", w.out.String())
	}
	if _, err := db.Exec("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	w.problem(s, "while off 1")
	w.problem(s, "while off 2")
	if err := phoneSendPendingRun(ctx, w.ios("")); err == nil || !strings.Contains(err.Error(), "run agentkit phone enable first") {
		t.Errorf("send-pending while off: %v", err)
	}
	if st := w.status(w.deps(nil)); !strings.Contains(st, "Phone channel: off") || !strings.Contains(st, "1 waiting, 0 sent, 0 failed, 2 held (agentkit phone send-pending sends them)") || !strings.Contains(st, "bot address           bot@corp.test") {
		t.Errorf("status while off:\n%s", st)
	}

	if err := phoneChannelRun(ctx, w.ios(""), true); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.Contains(out, "The phone channel is on") || !strings.Contains(out, "2 emails raised while it was off are held; agentkit phone send-pending sends them.") {
		t.Errorf("enable: %s", out)
	}
	// Enabling does not send what was held.
	var held int
	db.QueryRow("SELECT count(*) FROM outbox WHERE state = 'held'").Scan(&held)
	if held != 2 {
		t.Errorf("%d held after enable, want 2", held)
	}
	if err := phoneSendPendingRun(ctx, w.ios("")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.out.String(), "2 held emails will be sent by the running service") {
		t.Errorf("send-pending: %s", w.out.String())
	}
	if err := phoneSendPendingRun(ctx, w.ios("")); err != nil || !strings.Contains(w.out.String(), "No email is held.") {
		t.Errorf("send-pending again: %v %s", err, w.out.String())
	}
	if err := phoneChannelRun(ctx, w.ios(""), true); err != nil || !strings.Contains(w.out.String(), "already on") {
		t.Errorf("enable twice: %v %s", err, w.out.String())
	}
	// Disabling keeps the settings.
	phoneChannelRun(ctx, w.ios(""), false)
	if c := w.config(); c.BotAddress != testBot {
		t.Errorf("settings lost: %+v", c)
	}
}

func TestPhoneStatus(t *testing.T) {
	w := newPhoneWorld(t)
	if st := w.status(w.deps(nil)); !strings.Contains(st, "does not exist; run agentkit phone setup") || !strings.Contains(st, "missing: run agentkit phone setup, or set AGENTKIT_PHONE_PASSWORD") {
		t.Errorf("before setup:\n%s", st)
	}
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--no-verify", "--authserv-id", "mx.corp.test"}, w.serverFlags()...)
	if err := w.setup(w.deps(nil), testPassword, args...); err != nil {
		t.Fatal(err)
	}
	s, db := w.store()
	a, b := w.problem(s, "gate failed"), w.problem(s, "crashed")
	w.problem(s, "third")
	now := time.Now().UTC()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE outbox SET state = 'failed', attempts = 1, last_error = '550 5.1.1 <me@home.test>: Recipient address rejected' WHERE problem_id = (SELECT id FROM problems WHERE code = ?)`, string(a))
	exec(`UPDATE outbox SET state = 'sent', attempts = 1, sent_at = ? WHERE problem_id = (SELECT id FROM problems WHERE code = ?)`, state.Now(now.Add(-5*time.Minute)), string(b))
	exec(`INSERT INTO mailboxes (account, mailbox, uid_validity, last_uid, last_reached_at, idle, updated_at) VALUES (?, 'INBOX', 1, 7, ?, 1, ?)`, testBot, state.Now(now.Add(-2*time.Minute)), state.Now(now))

	w.env["AGENTKIT_PHONE_PASSWORD"] = testPassword
	st := w.status(w.deps(nil))
	for _, want := range []string{
		"Phone channel: on",
		"Settings: " + filepath.Join(w.home, "phone.yaml"),
		"owner                 me@home.test",
		"IMAP                  imap.corp.test:",
		"implicit TLS, login bot@corp.test",
		"trusted authserv-ids  mx.corp.test",
		"password              set, from AGENTKIT_PHONE_PASSWORD",
		"Outbox: 1 waiting, 1 sent, 1 failed",
		"failed  problem " + string(a) + ": 550 5.1.1 <me@home.test>: Recipient address rejected",
		"sent    problem " + string(b) + " 5m ago",
		"Mailbox bot@corp.test INBOX: last reached 2m ago; IDLE in use",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
	if strings.Contains(st, testPassword) {
		t.Error("status shows the password")
	}

	delete(w.env, "AGENTKIT_PHONE_PASSWORD")
	opts := &phoneStatusOptions{ios: w.ios(""), deps: w.deps(nil), JSON: true}
	if err := phoneStatusRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Enabled  bool   `json:"enabled"`
		Password string `json:"password"`
		Settings struct {
			BotAddress         string   `json:"bot_address"`
			TrustedAuthservIDs []string `json:"trusted_authserv_ids"`
		} `json:"settings"`
		Outbox struct {
			Failed int `json:"failed"`
		} `json:"outbox"`
		Mailboxes []struct {
			IdleInUse bool `json:"idle_in_use"`
		} `json:"mailboxes"`
	}
	if err := json.Unmarshal(w.out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if !got.Enabled || !strings.HasPrefix(got.Password, "missing") || got.Settings.BotAddress != testBot || got.Outbox.Failed != 1 || len(got.Mailboxes) != 1 || !got.Mailboxes[0].IdleInUse {
		t.Errorf("json: %+v", got)
	}
}
