//go:build linux

package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

// The addresses of the service tests' phone channel.
const (
	svcBot   = "bot@corp.test"
	svcOwner = "me@home.test"
)

// svcWorld is one owner's machine for the service tests: an agentkit home,
// a repository with a scripted builder and gate, loopback IMAP and SMTP
// servers, a fake DNS holding the owner's DKIM key, and the phone settings.
type svcWorld struct {
	*env
	t testing.TB
	// svcOut, when set, is the foreground service's own output, shown when
	// a wait times out (a service that exited at once logs nothing).
	svcOut *syncBuffer
	repo   string // the owner's checkout
	dir    string // scripts, call counts and markers, outside the repository
	secret string // the phone password
	ca     *mailtest.CA
	imap   *mailtest.IMAP
	smtp   *mailtest.SMTP
	keys   *mailtest.DKIM
	dns    string // the fake DNS server's address
	db     *state.DB
	store  *problems.Store
	// imapAddr and smtpAddr are where phone.yaml points the bot (the
	// mailtest servers unless a test puts its own in front).
	imapAddr, smtpAddr string
	// answersPerHour is phone.yaml's answers_per_hour (0: the default).
	answersPerHour int
}

func newSvcWorld(t testing.TB) *svcWorld {
	t.Helper()
	var nonce [8]byte
	rand.Read(nonce[:])
	w := &svcWorld{env: newEnv(t), t: t, dir: t.TempDir(), secret: "Zq9-svc-canary-" + hex.EncodeToString(nonce[:]), keys: mailtest.NewDKIM()}
	w.ca = mailtest.NewCA(t, "agentkit service-test CA")
	cert := mailtest.CertOptions{Names: []string{"127.0.0.1"}}
	w.imap = mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: w.ca.ServerTLS(t, cert), Users: map[string]string{svcBot: w.secret}})
	w.smtp = mailtest.StartSMTP(t, mailtest.SMTPOptions{TLS: w.ca.ServerTLS(t, cert), StartTLS: true, Users: map[string]string{svcBot: w.secret}})
	w.imapAddr, w.smtpAddr = w.imap.Addr, w.smtp.Addr
	w.dns = mailtest.ServeDNS(t, w.keys.LookupTXT)
	// The owner's DKIM key exists before the first reply is signed.
	w.keys.Sign(t, mailtest.CRLF("From: "+svcOwner+"\n\nx\n"), "home.test", "s1", "From")

	w.repo = w.env.repo("shop")
	w.mustRun(w.repo, "init")
	w.writeProject()

	db, err := state.Open(context.Background(), filepath.Join(w.home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w.db, w.store = db, problems.NewStore(db)
	return w
}

// writeProject gives the repository the command runtime running agent.sh
// (which, for a task with a hold marker, waits for the release of its n-th
// call, for up to a minute) and a fast gate that fails for a task until its work tree has fixed.txt.
// The gate prints the phone password when it fails, as a careless test
// suite might print a credential it knows: it must never reach a log or an
// email.
func (w *svcWorld) writeProject() {
	w.t.Helper()
	agent := `#!/bin/sh
S=` + w.dir + `
key="${AGENTKIT_TASK:-coordinator}"
n=$(( $(cat "$S/$key.count" 2>/dev/null || echo 0) + 1 ))
cat > "$S/$key.$n.prompt"
echo $n > "$S/$key.count"
if [ -e "$S/hold-$key" ]; then
  i=0; while [ ! -e "$S/release-$key.$n" ] && [ $i -lt 2000 ]; do i=$((i+1)); sleep 0.03; done
fi
echo "$key $n" > "$key.txt"
if grep -q "add the marker" "$S/$key.$n.prompt"; then echo fixed > fixed.txt; fi
echo '{"agentkit": {"status": "done"}}'
`
	gate := `t=$(basename "$PWD")
echo "run $(date +%s%N)" >> "` + w.dir + `/gate-$t.runs"
if [ -e "` + w.dir + `/fail-$t" ] && [ ! -e fixed.txt ] && [ ! -e "` + w.dir + `/fixed-$t" ]; then
  echo "FAIL: $t is broken; the login used password ` + w.secret + `"
  exit 1
fi
echo "ok $t"
`
	must(w.t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(agent), 0o755))
	must(w.t, os.WriteFile(filepath.Join(w.dir, "gate.sh"), []byte(gate), 0o644))
	project := fmt.Sprintf(`workflow: {mode: feature, review: off}
gates:
  fast: ["sh %s/gate.sh"]
  full: ["true"]
max_workers: 4
runtimes:
  default: command
  command: {argv: ["%s/agent.sh"]}
  grace: 1s
integration_branch: agentkit/integration
`, w.dir, w.dir)
	must(w.t, os.WriteFile(filepath.Join(w.repo, ".ai", "project.yaml"), []byte(project), 0o644))
}

// fail makes the gate fail for a task until it is fixed.
func (w *svcWorld) fail(task string) {
	must(w.t, os.WriteFile(filepath.Join(w.dir, "fail-"+task), nil, 0o644))
}

// fix makes the gate pass for a task from now on (the owner fixed the cause).
func (w *svcWorld) fix(task string) {
	must(w.t, os.WriteFile(filepath.Join(w.dir, "fixed-"+task), nil, 0o644))
}

// calls is how often the builder ran for a task.
func (w *svcWorld) calls(task string) int {
	data, _ := os.ReadFile(filepath.Join(w.dir, task+".count"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// gateRuns is how often the fast gate ran for a task; each run's line
// holds its time in nanoseconds.
func (w *svcWorld) gateRuns(task string) int {
	data, _ := os.ReadFile(filepath.Join(w.dir, "gate-"+task+".runs"))
	return strings.Count(string(data), "run")
}

// job adds the job's tasks to tasks.yaml and creates the job (not started).
func (w *svcWorld) job(name string, tasks ...string) {
	w.t.Helper()
	// tasks.yaml holds the tasks of every job.
	var b strings.Builder
	prev, err := os.ReadFile(filepath.Join(w.repo, ".ai", "tasks.yaml"))
	if err == nil && bytes.HasPrefix(prev, []byte("tasks:\n")) {
		b.Write(prev)
	} else {
		b.WriteString("tasks:\n")
	}
	for _, t := range tasks {
		fmt.Fprintf(&b, "  - id: %s\n    job_id: %s\n    title: Make %s\n    kind: SAFE_PARALLEL\n", t, name, t)
	}
	must(w.t, os.WriteFile(filepath.Join(w.repo, ".ai", "tasks.yaml"), []byte(b.String()), 0o644))
	req := filepath.Join(w.t.TempDir(), "request.md")
	must(w.t, os.WriteFile(req, []byte("Make the shop better.\n"), 0o644))
	w.mustRun(w.repo, "job", "create", name, "--request-file", req)
}

// phoneSetup writes phone.yaml (pointing DKIM lookups at the fake DNS) and
// phone.env, and turns the channel on.
func (w *svcWorld) phoneSetup() {
	w.t.Helper()
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress, cfg.OwnerAddresses = svcBot, []string{svcOwner}
	host, port := splitPort(w.t, w.imapAddr)
	cfg.IMAP = mailbot.Server{Host: host, Port: port, TLS: mailbot.TLSImplicit, CAFile: w.ca.File}
	host, port = splitPort(w.t, w.smtpAddr)
	cfg.SMTP = mailbot.Server{Host: host, Port: port, TLS: mailbot.TLSStartTLS, CAFile: w.ca.File}
	cfg.DNSServer = w.dns
	if w.answersPerHour > 0 {
		cfg.AnswersPerHour = w.answersPerHour
	}
	must(w.t, cfg.Save(mailbot.ConfigPath(w.home)))
	must(w.t, (&secrets.EnvFile{Path: secrets.EnvFilePath(w.home)}).Set(secrets.Phone, secrets.NewPassword(w.secret)))
	w.mustRun(w.repo, "phone", "enable")
}

func splitPort(t testing.TB, addr string) (string, int) {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	must(t, err)
	port, err := strconv.Atoi(p)
	must(t, err)
	return host, port
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing with what the service logged.
func (w *svcWorld) waitFor(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(w.home, "service.log"))
			own := ""
			if w.svcOut != nil {
				own = "\nservice output:\n" + tail(w.svcOut.String(), 30)
			}
			w.t.Fatalf("timed out waiting for %s; service log:\n%s%s", what, tail(string(log), 60), own)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// problemFor waits for the task's problem and returns it.
func (w *svcWorld) problemFor(task string) *problems.Problem {
	w.t.Helper()
	var found *problems.Problem
	w.waitFor("a problem for "+task, func() bool {
		list, err := w.store.List(context.Background(), problems.Filter{All: true, WithLog: true})
		must(w.t, err)
		for _, p := range list {
			if p.Task == task {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// mailsWith returns the accepted emails whose subject holds s.
func (w *svcWorld) mailsWith(s string) []parsedMail {
	var out []parsedMail
	for _, m := range w.smtp.Messages() {
		p := parseMail(w.t, m.Data)
		if strings.Contains(p.Subject, s) {
			out = append(out, p)
		}
	}
	return out
}

// waitMail waits for the one email whose subject holds s.
func (w *svcWorld) waitMail(s string) parsedMail {
	w.t.Helper()
	w.waitFor("an email about "+s, func() bool { return len(w.mailsWith(s)) > 0 })
	return w.mailsWith(s)[0]
}

// parsedMail is an accepted email, decoded.
type parsedMail struct {
	Raw       []byte
	Subject   string
	MessageID string
	Body      string
}

func parseMail(t testing.TB, raw []byte) parsedMail {
	t.Helper()
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("an email does not parse: %v\n%s", err, raw)
	}
	p := parsedMail{Raw: raw}
	p.Subject, _ = r.Header.Subject()
	p.MessageID, _ = r.Header.MessageID()
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading an email: %v", err)
		}
		if _, ok := part.Header.(*mail.InlineHeader); ok {
			b, _ := io.ReadAll(part.Body)
			p.Body += strings.ReplaceAll(string(b), "\r\n", "\n")
		}
	}
	return p
}

// reply is the owner's answer to an email, DKIM-signed by home.test as the
// owner's provider signs it, appended to the bot's INBOX.
func (w *svcWorld) reply(to parsedMail, words string) []byte {
	w.t.Helper()
	raw := w.unsigned(to, words)
	return w.keys.Sign(w.t, raw, "home.test", "s1", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
}

var replySeq atomic.Int64

// unsigned is the owner's answer to an email, without a signature.
func (w *svcWorld) unsigned(to parsedMail, words string) []byte {
	now := time.Now()
	mid := fmt.Sprintf("<%d.%d@phone.home.test>", now.UnixNano(), replySeq.Add(1))
	return mailtest.CRLF(fmt.Sprintf(`From: Jane <%s>
To: agentkit <%s>
Subject: Re: %s
Date: %s
Message-ID: %s
In-Reply-To: <%s>
References: <%s>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

%s

On %s agentkit wrote:
> earlier text
`, svcOwner, svcBot, to.Subject, now.Format(time.RFC1123Z), mid, to.MessageID, to.MessageID, words, now.Format("Mon, 2 Jan 2006")))
}

// count runs a counting query on the store.
func (w *svcWorld) count(query string, args ...any) int {
	w.t.Helper()
	var n int
	must(w.t, w.db.QueryRow(query, args...).Scan(&n))
	return n
}

// mailboxReachedAfter reports whether the mailbot reached the mailbox after t.
func (w *svcWorld) mailboxReachedAfter(t time.Time) bool {
	mb, err := mailbot.MailboxStates(context.Background(), w.db)
	must(w.t, err)
	return len(mb) == 1 && mb[0].LastReached.After(t)
}

// mailboxes reads the watched mailboxes' state.
func (w *svcWorld) mailboxes() []mailbot.MailboxState {
	mb, err := mailbot.MailboxStates(context.Background(), w.db)
	must(w.t, err)
	return mb
}
