//go:build linux

package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

// TestServiceEndToEnd runs the built binary as the owner would: the service
// in the foreground, a job whose task fails its gate, the problem email at
// the SMTP server, the service stopped, the owner's DKIM-signed reply
// arriving while it is down, the service started again in the background,
// the task re-run with the owner's words and merged, the confirmation and
// the job-done email; then a stop and a restart that neither lose nor
// repeat anything. Last, every output, email, log and stored value is
// searched for the phone password.
func TestServiceEndToEnd(t *testing.T) {
	w := newSvcWorld(t)
	w.job("j1", "good", "broken")
	w.fail("broken")

	// The service runs before the phone channel is set up: it says why the
	// mailbot does not run, then picks up phone.yaml when it appears.
	svc, out := w.startBinary(w.repo, "service", "run", "--grace", "5s")
	w.svcOut = out
	w.waitFor("the service to say why the mailbot does not run", func() bool {
		st := w.mustRun(w.repo, "service", "status")
		return strings.Contains(st, "Mailbot: not running: the phone channel is not set up")
	})
	w.phoneSetup()
	began := time.Now()
	w.waitFor("the mailbot to reach the mailbox", func() bool { return w.mailboxReachedAfter(began.Add(-time.Second)) })

	// job start finds the service running and says so.
	if o := w.mustRun(w.repo, "job", "start", "j1"); !strings.Contains(o, "Started j1.") || !strings.Contains(o, fmt.Sprintf("The background service (pid %d) runs it.", svc.Process.Pid)) {
		t.Fatalf("job start:\n%s", o)
	}

	// The gate fails twice (the automatic retry), then the problem is emailed.
	p := w.problemFor("broken")
	problemMail := w.waitMail(string(p.Code))
	if w.calls("broken") != 2 || w.gateRuns("broken") != 2 {
		t.Errorf("builder ran %d times, gate %d times before the problem", w.calls("broken"), w.gateRuns("broken"))
	}
	// The gate printed the password: the supervisor, given it by the service,
	// redacted it before the problem was stored.
	for _, want := range []string{"gate", "FAIL: broken is broken; the login used password [REDACTED]", "hint"} {
		if !strings.Contains(problemMail.Body, want) {
			t.Errorf("the problem email lacks %q:\n%s", want, problemMail.Body)
		}
	}
	st := w.mustRun(w.repo, "service", "status")
	for _, want := range []string{"Repositories served:\n  shop, since", "Mailbot: running since", "; IDLE in use", "Outbox: 0 waiting, 1 sent, 0 failed", "Open problems: 1"} {
		if !strings.Contains(st, want) {
			t.Errorf("service status lacks %q:\n%s", want, st)
		}
	}

	// The service stops; the owner's reply arrives while it is down.
	if o := w.mustRun(w.repo, "service", "stop"); !strings.Contains(o, fmt.Sprintf("Stopped the service (pid %d).", svc.Process.Pid)) {
		t.Fatalf("stop: %s", o)
	}
	if code := waitExit(t, svc, out); code != 0 {
		t.Fatalf("service run exited %d:\n%s", code, out.String())
	}
	w.imap.Append(t, svcBot, w.reply(problemMail, "hint add the marker file"), time.Now())

	// Started again in the background, it reads the reply and the task
	// continues its session with the owner's words.
	if o := w.mustRun(w.repo, "service", "start"); !strings.Contains(o, "Started the service (pid") {
		t.Fatalf("start: %s", o)
	}
	w.waitFor("the job to be done", func() bool {
		return w.count("SELECT count(*) FROM jobs WHERE name = 'j1' AND state = 'done'") == 1
	})
	confirmation := w.waitMail("Re: " + problemMail.Subject)
	done := w.waitMail("job j1")
	w.waitFor("the repository's supervisor to end with its job", func() bool {
		return strings.Contains(w.mustRun(w.repo, "service", "status"), "Repositories served: none")
	})
	if w.calls("broken") != 3 || !strings.Contains(readFile(t, filepath.Join(w.dir, "broken.3.prompt")), "add the marker file") {
		t.Errorf("the builder was not continued with the hint: %d calls", w.calls("broken"))
	}
	if !strings.Contains(confirmation.Body, "hint") {
		t.Errorf("confirmation:\n%s", confirmation.Body)
	}
	head := strings.TrimSpace(gitOut(t, w.env, w.repo, "rev-parse", "agentkit/integration"))
	for _, want := range []string{"2 merged, 0 skipped, 0 cancelled", "    broken: Make broken", "    good: Make good",
		"agentkit/integration is at commit\n    " + head + "\n", "    git merge agentkit/integration"} {
		if !strings.Contains(done.Body, want) {
			t.Errorf("the job-done email lacks %q:\n%s", want, done.Body)
		}
	}
	if _, err := os.Stat(filepath.Join(w.repo, "fixed.txt")); !os.IsNotExist(err) {
		t.Error("the task's work reached the owner's checkout")
	}
	if got := gitOut(t, w.env, w.repo, "show", "agentkit/integration:fixed.txt"); got != "fixed\n" {
		t.Errorf("fixed.txt on the integration branch: %q", got)
	}
	log := w.mustRun(w.repo, "phone", "log")
	if !strings.Contains(log, "authenticated by the bot's own DKIM check: d=home.test") {
		t.Errorf("the reply was not authenticated by its DKIM signature:\n%s", log)
	}

	// A stop and a restart: nothing is sent, applied or run again.
	mails, decisions, calls := len(w.smtp.Messages()), w.count("SELECT count(*) FROM decisions"), w.calls("broken")
	w.mustRun(w.repo, "service", "stop")
	restarted := time.Now()
	w.mustRun(w.repo, "service", "start")
	w.waitFor("the mailbot to reach the mailbox again", func() bool { return w.mailboxReachedAfter(restarted) })
	w.waitFor("the outbox to be empty", func() bool {
		return w.count("SELECT count(*) FROM outbox WHERE state != 'sent'") == 0
	})
	st = w.mustRun(w.repo, "service", "status")
	if !strings.Contains(st, "Repositories served: none") || !strings.Contains(st, "Mailbot: running since") || !strings.Contains(st, "Outbox: 0 waiting, 3 sent, 0 failed") || !strings.Contains(st, "Open problems: none") {
		t.Errorf("service status after the job:\n%s", st)
	}
	if len(w.smtp.Messages()) != mails || w.count("SELECT count(*) FROM decisions") != decisions || w.calls("broken") != calls {
		t.Errorf("the restart repeated something: %d emails (had %d), %d decisions (had %d), %d builder calls (had %d)",
			len(w.smtp.Messages()), mails, w.count("SELECT count(*) FROM decisions"), decisions, w.calls("broken"), calls)
	}
	if n := w.count("SELECT count(*) FROM inbound"); n != 1 {
		t.Errorf("%d inbound messages recorded, want the one reply", n)
	}
	w.mustRun(w.repo, "service", "stop")
	svcLog := readFile(t, filepath.Join(w.home, "service.log"))
	for _, want := range []string{`"msg":"the mailbot does not run"`, `"msg":"starting the mailbot"`, `"msg":"serving repository","repo":"shop"`, `"msg":"unit finished","unit":"repo/shop"`, `"msg":"email sent"`} {
		if !strings.Contains(svcLog, want) {
			t.Errorf("the service log lacks %s:\n%s", want, svcLog)
		}
	}
	w.searchSecret()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// searchSecret fails the test when the phone password, or a form a login
// puts it in, is in any email, in any file under the agentkit home but
// phone.env (the service's log among them), or in any stored value.
func (w *svcWorld) searchSecret() {
	w.t.Helper()
	needles := map[string]string{
		"plain":      w.secret,
		"base64":     base64.StdEncoding.EncodeToString([]byte(w.secret)),
		"SASL PLAIN": base64.StdEncoding.EncodeToString([]byte("\x00" + svcBot + "\x00" + w.secret)),
		"its tail":   w.secret[len(w.secret)-12:],
	}
	search := func(where string, data []byte) {
		for name, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				w.t.Errorf("the password (%s) is in %s", name, where)
			}
		}
	}
	for _, m := range w.smtp.Messages() {
		search("an email", m.Data)
	}
	files := 0
	filepath.Walk(w.home, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || p == filepath.Join(w.home, "phone.env") {
			return err
		}
		data, err := os.ReadFile(p)
		must(w.t, err)
		search(p, data)
		files++
		return nil
	})
	if files < 3 {
		w.t.Errorf("only %d files searched", files)
	}
	db, err := state.Open(context.Background(), filepath.Join(w.home, "state.db"))
	must(w.t, err)
	defer db.Close()
	tables, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	must(w.t, err)
	var names []string
	for tables.Next() {
		var n string
		must(w.t, tables.Scan(&n))
		names = append(names, n)
	}
	tables.Close()
	for _, n := range names {
		rows, err := db.Query(`SELECT * FROM "` + n + `"`)
		must(w.t, err)
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			must(w.t, rows.Scan(ptrs...))
			for i, v := range vals {
				search("table "+n+" column "+cols[i], v)
			}
		}
		rows.Close()
	}
}
