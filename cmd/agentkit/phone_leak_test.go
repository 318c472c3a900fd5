package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// runIn runs the binary with stdin in a fresh folder.
func (e *env) runIn(stdin string, args ...string) (string, string, int) {
	e.t.Helper()
	return e.runWith(e.t.TempDir(), stdin, args...)
}

// leakWorld records every output, so the test can search them all.
type leakWorld struct {
	*env
	outputs []string
}

func (w *leakWorld) run(stdin string, args ...string) (string, string, int) {
	w.t.Helper()
	out, errOut, code := w.runIn(stdin, args...)
	w.outputs = append(w.outputs, "$ agentkit "+strings.Join(args, " ")+"\n"+out+errOut)
	return out, errOut, code
}

func (w *leakWorld) must(stdin string, args ...string) string {
	w.t.Helper()
	out, errOut, code := w.run(stdin, args...)
	if code != 0 {
		w.t.Fatalf("agentkit %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// providerReply is the owner's reply as the bot's provider delivers it:
// its inbound Received header and its trusted Authentication-Results on
// top (no DKIM, so no DNS is needed anywhere).
func providerReply(inReplyTo, subject, body string) []byte {
	now := time.Now()
	return mailtest.CRLF(fmt.Sprintf(`Authentication-Results: mx.corp.test; dkim=pass header.d=home.test header.s=s1; spf=pass smtp.mailfrom=me@home.test; dmarc=pass header.from=home.test
Received: from out.home.test (out.home.test [203.0.113.7]) by mx.corp.test with ESMTPS id q1; %s
From: Jane <me@home.test>
To: bot@corp.test
Subject: Re: %s
Date: %s
Message-ID: <%d.android@home.test>
In-Reply-To: <%s>
References: <%s>
Content-Type: text/plain; charset=utf-8

%s

On %s agentkit wrote:
> earlier text
`, now.Format(time.RFC1123Z), subject, now.Format(time.RFC1123Z), now.UnixNano(), inReplyTo, inReplyTo, body, now.Format("Mon, 2 Jan 2006")))
}

func header(t *testing.T, raw []byte, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?mi)^` + key + `: *(.*)\r?$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no %s in:\n%s", key, raw)
	}
	return strings.TrimSpace(string(m[1]))
}

// TestPhoneSecretsNeverLeak runs setup (a failing one too), status, check,
// test and a mailbot round trip with a known password, then searches every
// output, the service log, every file under AGENTKIT_HOME but phone.env,
// and every value in the database for it.
func TestPhoneSecretsNeverLeak(t *testing.T) {
	var nonce [8]byte
	rand.Read(nonce[:])
	secret := "Zq9-canary-" + hex.EncodeToString(nonce[:])
	e := newEnv(t)
	w := &leakWorld{env: e}
	ca := mailtest.NewCA(t, "agentkit leak-test CA")
	cert := mailtest.CertOptions{Names: []string{"127.0.0.1"}}
	imapSrv := mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: ca.ServerTLS(t, cert), Users: map[string]string{"bot@corp.test": secret}})
	smtpSrv := mailtest.StartSMTP(t, mailtest.SMTPOptions{TLS: ca.ServerTLS(t, cert), StartTLS: true, Users: map[string]string{"bot@corp.test": secret}})
	_, imapPort, _ := net.SplitHostPort(imapSrv.Addr)
	_, smtpPort, _ := net.SplitHostPort(smtpSrv.Addr)
	setupArgs := []string{"phone", "setup", "--bot-address", "bot@corp.test", "--owner", "me@home.test",
		"--imap", "127.0.0.1:" + imapPort, "--imap-ca", ca.File, "--smtp", "127.0.0.1:" + smtpPort, "--smtp-tls", "starttls", "--smtp-ca", ca.File,
		"--authserv-id", "mx.corp.test", "--password-stdin", "--write-env"}

	// A wrong password first: refused, and nothing saved.
	wrong := secret + "-wrong"
	if out, errOut, code := w.run(wrong+"\n", setupArgs...); code == 0 || !strings.Contains(out, "✗ IMAP login the server refused the login of bot@corp.test") || !strings.Contains(errOut, "nothing was saved") {
		t.Fatalf("wrong password: %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.home, "phone.yaml")); !os.IsNotExist(err) {
		t.Fatal("phone.yaml written after a failed verification")
	}
	out := w.must(secret+"\n", setupArgs...)
	if !strings.Contains(out, "✓ SMTP login logged in as bot@corp.test") || !strings.Contains(out, "The password is kept in "+filepath.Join(e.home, "phone.env")) {
		t.Fatalf("setup:\n%s", out)
	}
	for _, f := range []string{"phone.yaml", "phone.env"} {
		if st, err := os.Stat(filepath.Join(e.home, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, st.Mode(), err)
		}
	}
	if out := w.must("", "phone", "status"); !strings.Contains(out, "password              set, in "+filepath.Join(e.home, "phone.env")) {
		t.Fatalf("status:\n%s", out)
	}
	w.must("", "phone", "status", "--json")

	// phone test --wait: the owner's reply arrives once the test email does.
	cmd := exec.Command(binary, "phone", "test", "--wait", "--timeout", "1m")
	cmd.Dir, cmd.Env = t.TempDir(), e.vars
	var tout, terr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &tout, &terr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sent := smtpSrv.WaitMessages(t, 1, time.Minute)[0]
	testReply := providerReply(header(t, sent.Data, "Message-ID")[1:len(header(t, sent.Data, "Message-ID"))-1], header(t, sent.Data, "Subject"), "retry")
	imapSrv.Append(t, "bot@corp.test", testReply, time.Now())
	if err := cmd.Wait(); err != nil {
		t.Fatalf("phone test: %v\n%s%s", err, tout.String(), terr.String())
	}
	w.outputs = append(w.outputs, tout.String()+terr.String())
	if !strings.Contains(tout.String(), "Replies from this phone will be obeyed (mx.corp.test vouched: dkim=pass for home.test).") {
		t.Fatalf("phone test:\n%s%s", tout.String(), terr.String())
	}

	// The mailbot round trip: a problem becomes an email; the reply becomes
	// a decision and a confirmation. The bot logs at debug level into the
	// service log.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := state.Open(ctx, filepath.Join(e.home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := mailbot.LoadConfig(filepath.Join(e.home, "phone.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pw, err := (&secrets.EnvFile{Path: filepath.Join(e.home, "phone.env")}).Get(secrets.Phone)
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.OpenFile(filepath.Join(e.home, "service.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logger := slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))
	logger.Info("starting the mailbot", "password", pw, "config", cfg) // a careless log line must still not leak
	bot, err := mailbot.New(mailbot.Options{DB: db, Config: cfg, Password: pw, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	// The service wires the store to redact log tails with the password
	// known, as here; a job's log that printed it must not carry it on.
	store := problems.NewStore(db)
	store.Redact = func(s string) string { return mailbot.RedactLog(s, pw.Reveal()) }
	code, err := store.Create(ctx, problems.New{Repo: "shop", Kind: problems.GateFailed, Summary: "gate fast failed: 2 tests",
		LogTail: "FAIL TestLogin\nlogin with password " + secret + " refused\n"})
	if err != nil {
		t.Fatal(err)
	}
	mails := smtpSrv.WaitMessages(t, 2, time.Minute)
	problemMail := mails[1].Data
	if !strings.Contains(header(t, problemMail, "Subject"), string(code)) {
		t.Fatalf("problem email:\n%s", problemMail)
	}
	imapSrv.Append(t, "bot@corp.test", providerReply(strings.Trim(header(t, problemMail, "Message-ID"), "<>"), header(t, problemMail, "Subject"), "retry"), time.Now())
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := store.Get(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if p.Decision != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no decision for %s within a minute; phone log:\n%s", code, w.must("", "phone", "log"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	saved := filepath.Join(t.TempDir(), "reply.eml")
	os.WriteFile(saved, testReply, 0o600)
	w.run("", "phone", "check", "--offline", saved)
	w.run("", "phone", "check", "--json", "--offline", saved)
	w.must("", "phone", "log")
	w.must("", "phone", "log", "--json")
	w.must("", "phone", "status")
	w.must("", "phone", "disable")
	w.must("", "phone", "enable")

	// The search: the password, and the forms a login puts it in.
	needles := map[string]string{
		"plain":             secret,
		"base64":            base64.StdEncoding.EncodeToString([]byte(secret)),
		"SASL PLAIN":        base64.StdEncoding.EncodeToString([]byte("\x00bot@corp.test\x00" + secret)),
		"hex":               hex.EncodeToString([]byte(secret)),
		"the secret's tail": secret[len(secret)-12:],
	}
	search := func(where string, data []byte) {
		t.Helper()
		for name, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				t.Errorf("the password (%s) is in %s", name, where)
			}
		}
	}
	for i, o := range w.outputs {
		search(fmt.Sprintf("output %d", i), []byte(o))
	}
	for _, m := range smtpSrv.Messages() {
		search("an email sent to "+strings.Join(m.To, ","), m.Data)
	}
	db.Close()
	files := 0
	filepath.Walk(e.home, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || p == filepath.Join(e.home, "phone.env") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		search(p, data)
		files++
		return nil
	})
	if files < 3 {
		t.Errorf("only %d files searched under %s", files, e.home)
	}
	if data, _ := os.ReadFile(filepath.Join(e.home, "service.log")); !bytes.Contains(data, []byte("[redacted]")) {
		t.Errorf("the service log lacks the careless line:\n%s", data)
	}
	// Every value of every table, as SQLite returns it.
	db2, err := state.Open(context.Background(), filepath.Join(e.home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	tables, err := db2.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		tables.Scan(&n)
		names = append(names, n)
	}
	tables.Close()
	values := 0
	for _, n := range names {
		rows, err := db2.Query(`SELECT * FROM "` + n + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				search(fmt.Sprintf("the database, table %s column %s", n, cols[i]), v)
				values++
			}
		}
		rows.Close()
	}
	if values == 0 {
		t.Error("the database was empty")
	}
}
