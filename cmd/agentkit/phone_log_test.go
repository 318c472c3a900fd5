package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
)

func TestPhoneLog(t *testing.T) {
	w := newPhoneWorld(t)
	ctx := context.Background()
	if err := phoneLogRun(ctx, &phoneLogOptions{ios: w.ios(""), Limit: 20}); err != nil || !strings.Contains(w.out.String(), "No message has been read yet.") {
		t.Fatalf("%v %s", err, w.out.String())
	}
	_, db := w.store()
	refused, _ := json.Marshal(mailbot.Verdict{Outcome: mailbot.OutcomeRefuse, StoppedBy: mailbot.CheckDKIM,
		Signatures: []mailbot.SignatureResult{{Domain: "evil.test", Result: "pass"}}})
	obeyed, _ := json.Marshal(mailbot.Verdict{Outcome: mailbot.OutcomeAct,
		Auth: &mailbot.Auth{Path: "authres", Method: "dkim", Domain: "home.test", AuthservID: "mx.corp.test"}})
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for i, r := range []struct{ from, subject, outcome, reason, code, verdict string }{
		{"me@home.test", "Re: [agentkit] BCDFGH shop: gate failed", "refused", "dkim: no passing signature aligned with home.test", "", string(refused)},
		{"me@home.test", "Re: [agentkit] BCDFGH shop: gate failed", "obeyed", "", "BCDFGH", string(obeyed)},
	} {
		if _, err := db.Exec(`INSERT INTO inbound (account, mailbox, uid_validity, uid, message_id, sender, subject, size, outcome, reason, code, verdict, at)
			VALUES ('bot@corp.test', 'INBOX', 1, ?, ?, ?, ?, 100, ?, ?, ?, ?, ?)`, i+1, "m"+string(rune('a'+i))+"@home.test", r.from, r.subject, r.outcome, r.reason, r.code, r.verdict, state.Now(at.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	if err := phoneLogRun(ctx, &phoneLogOptions{ios: w.ios(""), Limit: 20}); err != nil {
		t.Fatal(err)
	}
	out := w.out.String()
	obeyedAt := strings.Index(out, "obeyed")
	refusedAt := strings.Index(out, "refused")
	if obeyedAt < 0 || refusedAt < 0 || obeyedAt > refusedAt {
		t.Errorf("want newest first:\n%s", out)
	}
	for _, want := range []string{
		"obeyed   BCDFGH  from me@home.test  \"Re: [agentkit] BCDFGH shop: gate failed\"",
		"authenticated by mx.corp.test's Authentication-Results: dkim=pass for home.test",
		"dkim: no passing signature aligned with home.test",
		"DKIM signatures: d=evil.test pass, not aligned",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if err := phoneLogRun(ctx, &phoneLogOptions{ios: w.ios(""), Limit: 1, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var got []mailbot.LogEntry
	if err := json.Unmarshal(w.out.Bytes(), &got); err != nil || len(got) != 1 || got[0].Outcome != "obeyed" || len(got[0].Verdict) == 0 {
		t.Errorf("json: %v %+v", err, got)
	}
}
