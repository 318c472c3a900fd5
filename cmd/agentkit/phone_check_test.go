package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/problems"
)

// reply is a reply as the owner's phone would send it.
type reply struct {
	from, subject, body string
	headers             []string // extra header lines, placed on top
	date                time.Time
}

func (r reply) raw() []byte {
	if r.from == "" {
		r.from = "Jane <me@home.test>"
	}
	if r.date.IsZero() {
		r.date = time.Now()
	}
	var b strings.Builder
	for _, h := range r.headers {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "From: %s\nTo: %s\nSubject: %s\nDate: %s\nMessage-ID: <%d.phone@home.test>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n%s\n",
		r.from, testBot, r.subject, r.date.Format(time.RFC1123Z), r.date.UnixNano(), r.body)
	return mailtest.CRLF(b.String())
}

// checkWorld is a set-up phone channel with one open gate_failed problem.
func checkWorld(t *testing.T) (*phoneWorld, problems.Code, *mailtest.DKIM) {
	t.Helper()
	w := newPhoneWorld(t)
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--no-verify", "--authserv-id", "mx.corp.test"}, w.serverFlags()...)
	if err := w.setup(w.deps(nil), testPassword, args...); err != nil {
		t.Fatal(err)
	}
	s, _ := w.store()
	return w, w.problem(s, "gate fast failed: 2 tests"), mailtest.NewDKIM()
}

func (w *phoneWorld) save(name string, raw []byte) string {
	w.t.Helper()
	p := filepath.Join(w.t.TempDir(), name)
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *phoneWorld) check(d *mailtest.DKIM, args ...string) (string, error) {
	w.t.Helper()
	var opts *phoneCheckOptions
	cmd := newCmdPhoneCheck(w.ios(""), func(o *phoneCheckOptions) error { opts = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return "", err
	}
	if d != nil {
		opts.lookupTXT = d.LookupTXT
	}
	err := phoneCheckRun(context.Background(), opts)
	return w.out.String(), err
}

func TestPhoneCheck(t *testing.T) {
	w, code, d := checkWorld(t)
	subject := "Re: [agentkit] " + string(code) + " shop: gate fast failed: 2 tests"
	signed := d.Sign(t, reply{subject: subject, body: "retry\n\nOn Mon, agentkit wrote:\n> gate fast failed"}.raw(), "home.test", "s1", "From", "To", "Subject", "Date", "Message-ID")
	forged := reply{subject: subject, body: "skip"}.raw()
	received := "Received: from mail.home.test (mail.home.test [203.0.113.5]) by mx.corp.test with ESMTPS id 4a; " + time.Now().Format(time.RFC1123Z)
	vouched := reply{subject: subject, body: "hint use the v2 API", headers: []string{
		"Authentication-Results: mx.corp.test; dkim=pass header.d=home.test header.s=s1; spf=pass smtp.mailfrom=me@home.test; dmarc=pass header.from=home.test",
		received,
	}}.raw()
	notOffered := d.Sign(t, reply{subject: subject, body: "accept"}.raw(), "home.test", "s1", "From", "To", "Subject", "Date", "Message-ID")

	files := map[string]string{
		"signed":      w.save("signed.eml", signed),
		"forged":      w.save("forged.eml", forged),
		"vouched":     w.save("vouched.eml", vouched),
		"not-offered": w.save("not-offered.eml", notOffered),
	}

	out, err := w.check(d, files["signed"])
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		files["signed"] + ": would be obeyed: retry " + string(code),
		"✓ size ", "✓ ignore ", "✓ from ", "✓ duplicates ",
		"✓ dkim       DKIM signature by home.test (selector s1) verified, aligned with home.test",
		"· authres    not needed",
		"✓ fresh ", "✓ command ",
		"✓ code       code " + string(code) + " from the subject",
		"✓ problem    problem " + string(code) + " is open and offers retry",
		"signature  d=home.test s=s1: pass, aligned with the From domain",
		"auth       the bot's own DKIM check: d=home.test",
		"command    retry",
		"code       " + string(code) + " (from the subject)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check of a signed reply lacks %q:\n%s", want, out)
		}
	}
	// Checking changes nothing: the problem is still open and unanswered.
	s, _ := w.store()
	if p, _ := s.Get(context.Background(), code); p.State != problems.Open || p.Decision != nil {
		t.Errorf("phone check acted: %+v", p)
	}

	out, err = w.check(d, files["forged"], files["not-offered"])
	if err == nil || err.Error() != "2 of 2 messages would not be obeyed" {
		t.Errorf("err = %v", err)
	}
	for _, want := range []string{
		files["forged"] + ": would be refused at authres: ",
		"✗ dkim       the message has no DKIM signature",
		"✗ authres ",
		"· fresh      not reached",
		files["not-offered"] + ": would be answered, not obeyed: problem " + string(code) + " does not offer accept; it offers retry, hint, skip, plan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Offline, the signed reply cannot pass (no key lookup), the vouched one
	// can, through the trusted Authentication-Results.
	out, err = w.check(d, "--offline", files["vouched"])
	if err != nil || !strings.Contains(out, "would be obeyed: hint "+string(code)+" use the v2 API") || !strings.Contains(out, "auth       mx.corp.test's Authentication-Results: dkim=pass for home.test") || !strings.Contains(out, `words      "use the v2 API"`) {
		t.Errorf("offline vouched: %v\n%s", err, out)
	}
	out, err = w.check(d, "--offline", files["signed"])
	if err == nil || !strings.Contains(out, "not looked up: --offline") {
		t.Errorf("offline signed: %v\n%s", err, out)
	}

	// --json: one object per message, one per line.
	out, _ = w.check(d, "--json", files["signed"], files["forged"], files["vouched"])
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("--json printed %d lines:\n%s", len(lines), out)
	}
	var got []judged
	for _, l := range lines {
		var j judged
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, j)
	}
	if !got[0].Obeyed || got[0].Command == nil || got[0].Command.Code != string(code) || got[0].Problem == nil || len(got[0].Checks) != 9 {
		t.Errorf("json signed: %+v", got[0])
	}
	if got[1].Obeyed || got[1].StoppedBy != "authres" || got[1].File != files["forged"] {
		t.Errorf("json forged: %+v", got[1])
	}
	if !got[2].Obeyed || got[2].Auth == nil || got[2].Auth.AuthservID != "mx.corp.test" {
		t.Errorf("json vouched: %+v", got[2])
	}

	if _, err := w.check(d, filepath.Join(t.TempDir(), "missing.eml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}
