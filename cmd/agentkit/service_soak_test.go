//go:build linux

package main_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/problems"
)

// restartableIMAP is an IMAP server whose process can "restart": every
// connection drops and the port refuses nothing for long, while the
// mailbox (its messages, UIDs and UIDVALIDITY) stays, as on a real server.
type restartableIMAP struct {
	t    *testing.T
	addr string
	tls  *tls.Config
	mem  *imapmemserver.Server
	user *imapmemserver.User

	mu       sync.Mutex
	srv      *imapserver.Server
	restarts int
}

func startRestartableIMAP(t *testing.T, tlsConfig *tls.Config, user, password string) *restartableIMAP {
	t.Helper()
	s := &restartableIMAP{t: t, tls: tlsConfig, mem: imapmemserver.New(), user: imapmemserver.NewUser(user, password)}
	must(t, s.user.Create("INBOX", nil))
	s.mem.AddUser(s.user)
	s.serve("127.0.0.1:0")
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.srv.Close()
	})
	return s
}

func (s *restartableIMAP) serve(addr string) {
	s.t.Helper()
	ln, err := net.Listen("tcp", addr)
	must(s.t, err)
	s.addr = ln.Addr().String()
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return s.mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		Logger:       log.New(io.Discard, "", 0),
		InsecureAuth: true, // TLS is underneath
	})
	go srv.Serve(tls.NewListener(ln, s.tls))
	s.srv = srv
}

// restart closes every connection and listens again on the same port.
func (s *restartableIMAP) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv.Close()
	s.serve(s.addr)
	s.restarts++
}

// append delivers a message to the INBOX.
func (s *restartableIMAP) append(raw []byte) {
	s.t.Helper()
	_, err := s.user.Append("INBOX", literalReader{strings.NewReader(string(raw)), int64(len(raw))}, &imap.AppendOptions{Time: time.Now()})
	must(s.t, err)
}

type literalReader struct {
	io.Reader
	n int64
}

func (l literalReader) Size() int64 { return l.n }

// refusingProxy passes SMTP connections through to a server, or, while
// refusing, answers each with 421 (try again later) and hangs up, as a
// provider under load or in maintenance does.
type refusingProxy struct {
	addr    string
	refuse  atomic.Bool
	refused atomic.Int32
}

func startRefusingProxy(t *testing.T, backend string) *refusingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	p := &refusingProxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c, backend)
		}
	}()
	return p
}

func (p *refusingProxy) handle(c net.Conn, backend string) {
	defer c.Close()
	if p.refuse.Load() {
		p.refused.Add(1)
		io.WriteString(c, "421 4.3.2 mx.test is not accepting mail now, try again later\r\n")
		return
	}
	b, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(b, c); done <- struct{}{} }()
	go func() { io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// TestServiceSoak streams problems and replies through the built service
// while the IMAP server restarts twice and the SMTP server refuses mail
// twice for a while; forged and duplicated replies are mixed in. In the
// end every problem was emailed exactly once, every genuine reply applied
// exactly once, and no forged or repeated one acted.
func TestServiceSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test takes about a minute; run it without -short")
	}
	w := newSvcWorld(t)
	cert := mailtest.CertOptions{Names: []string{"127.0.0.1"}}
	imapSrv := startRestartableIMAP(t, w.ca.ServerTLS(t, cert), svcBot, w.secret)
	proxy := startRefusingProxy(t, w.smtp.Addr)
	w.imapAddr, w.smtpAddr, w.answersPerHour = imapSrv.addr, proxy.addr, 100
	forger := mailtest.NewDKIM() // signs as home.test with a key the DNS does not hold

	w.phoneSetup()
	svc, out := w.startBinary(w.repo, "service", "run")
	began := time.Now()
	w.waitFor("the mailbot to reach the mailbox", func() bool { return w.mailboxReachedAfter(began.Add(-time.Second)) })

	first, second := []string{"a1", "a2", "a3"}, []string{"b1", "b2", "b3"}
	for _, task := range append(append([]string{}, first...), second...) {
		w.fail(task)
	}
	w.job("j1", first...)
	w.job("j2", second...)

	// Wave one: the problems arise while SMTP refuses; IMAP restarts meanwhile.
	proxy.refuse.Store(true)
	w.mustRun(w.repo, "job", "start", "j1")
	codes := map[string]problems.Code{}
	for _, task := range first {
		codes[task] = w.problemFor(task).Code
	}
	w.waitFor("SMTP to refuse the bot", func() bool { return proxy.refused.Load() > 0 })
	imapSrv.restart()
	proxy.refuse.Store(false)

	genuine := map[problems.Code]string{} // code → the Message-ID of the reply that must act
	answer := func(task string, n int) {
		t.Helper()
		code := codes[task]
		mail := w.problemMail(code)
		// A forgery first: it must change nothing.
		var forged []byte
		switch n % 3 {
		case 0: // no signature at all
			forged = w.unsigned(mail, "skip")
		case 1: // signed for home.test with a key that is not home.test's
			forged = forger.Sign(t, w.unsigned(mail, "skip"), "home.test", "s1", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
		case 2: // signed by another domain
			forged = forger.Sign(t, w.unsigned(mail, "skip"), "evil.test", "s1", "From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References")
		}
		seen := w.count("SELECT count(*) FROM inbound")
		imapSrv.append(forged)
		w.waitFor("the forgery to be judged", func() bool { return w.count("SELECT count(*) FROM inbound") > seen })
		if d := w.count("SELECT count(*) FROM decisions d JOIN problems p ON p.id = d.problem_id WHERE p.code = ?", string(code)); d != 0 {
			t.Fatalf("a forged reply (%d) decided %s", n%3, code)
		}
		// The owner fixes the cause and replies retry, and their phone sends it twice.
		w.fix(task)
		reply := w.reply(mail, "retry")
		genuine[code] = "<" + parseMail(t, reply).MessageID + ">"
		imapSrv.append(reply)
		imapSrv.append(reply)
	}

	answer("a1", 0)
	// Wave two: j2's problems arise and j1's confirmations are owed while
	// SMTP refuses again; IMAP restarts between replies.
	proxy.refuse.Store(true)
	refusedBefore := proxy.refused.Load()
	w.mustRun(w.repo, "job", "start", "j2")
	answer("a2", 1)
	imapSrv.restart()
	answer("a3", 2)
	for _, task := range second {
		codes[task] = w.problemFor(task).Code
	}
	w.waitFor("SMTP to refuse the bot again", func() bool { return proxy.refused.Load() > refusedBefore })
	proxy.refuse.Store(false)
	for i, task := range second {
		answer(task, i)
	}

	w.waitFor("both jobs to be done", func() bool {
		return w.count("SELECT count(*) FROM jobs WHERE state = 'done'") == 2
	})
	w.waitFor("every owed email to be sent", func() bool {
		return w.count("SELECT count(*) FROM outbox WHERE state != 'sent'") == 0 && len(w.smtp.Messages()) >= 6+6+2
	})
	w.mustRun(w.repo, "service", "stop")
	if code := waitExit(t, svc, out); code != 0 {
		t.Fatalf("service run exited %d:\n%s", code, out.String())
	}

	// Every problem emailed once, and one confirmation per decision.
	byID := map[string]int{}
	for _, m := range w.smtp.Messages() {
		byID[parseMail(t, m.Data).MessageID]++
	}
	for id, n := range byID {
		if n != 1 {
			t.Errorf("the email %s was accepted %d times", id, n)
		}
	}
	for task, code := range codes {
		if n := len(w.problemMails(code)); n != 1 {
			t.Errorf("problem %s (%s) was emailed %d times", code, task, n)
		}
		if n := len(w.mailsWith("Re: [agentkit] " + string(code))); n != 1 {
			t.Errorf("the decision on %s was confirmed %d times", code, n)
		}
		// Every genuine reply applied once: one decision, from that reply,
		// and the gate ran once more (2 failures, then the retry).
		var n int
		var source, outcome string
		must(t, w.db.QueryRow(`SELECT count(*), max(d.source_id), max(d.outcome) FROM decisions d JOIN problems p ON p.id = d.problem_id WHERE p.code = ?`, string(code)).Scan(&n, &source, &outcome))
		if n != 1 || !strings.Contains(source, strings.Trim(genuine[code], "<>")) || outcome == "" {
			t.Errorf("%s (%s): %d decisions, source %q (want %s), outcome %q", code, task, n, source, genuine[code], outcome)
		}
		if r, c := w.gateRuns(task), w.calls(task); r != 3 || c != 2 {
			t.Errorf("task %s: gate ran %d times (want 3), builder %d times (want 2)", task, r, c)
		}
	}
	if n := len(w.mailsWith("job j")); n != 2 {
		t.Errorf("%d job-done emails, want 2", n)
	}
	if n := w.count("SELECT count(*) FROM tasks WHERE state = 'merged'"); n != 6 {
		t.Errorf("%d tasks merged, want 6", n)
	}
	// 6 forgeries, 6 genuine replies, 6 duplicates: each judged once; only
	// the genuine ones obeyed.
	var obeyed, total int
	must(t, w.db.QueryRow("SELECT count(*), coalesce(sum(decision_id IS NOT NULL), 0) FROM inbound").Scan(&total, &obeyed))
	if obeyed != 6 {
		t.Errorf("%d inbound messages made decisions, want 6", obeyed)
	}
	if imapSrv.restarts != 2 || proxy.refused.Load() < 2 {
		t.Errorf("the faults did not happen: %d IMAP restarts, %d refused SMTP connections", imapSrv.restarts, proxy.refused.Load())
	}
	// The service saw each outage and its end.
	svcLog := readFile(t, filepath.Join(w.home, "service.log"))
	for msg, want := range map[string]int{
		"the mailbox cannot be read; reconnecting until it answers": 2, "the mailbox is reachable again": 2,
		"the SMTP server cannot be used; owed email waits": 2, "the SMTP server can be used again": 2,
	} {
		if n := strings.Count(svcLog, `"msg":"`+msg+`"`); n < want {
			t.Errorf("the service logged %q %d times, want %d", msg, n, want)
		}
	}
	t.Logf("%d emails, %d inbound messages judged, %d SMTP connections refused, in %s", len(w.smtp.Messages()), total, proxy.refused.Load(), time.Since(began).Round(time.Second))
	w.searchSecret()
}

// problemMails are the problem's own emails (not the replies about it).
func (w *svcWorld) problemMails(code problems.Code) []parsedMail {
	var out []parsedMail
	for _, m := range w.mailsWith(string(code)) {
		if strings.HasPrefix(m.Subject, "[agentkit]") {
			out = append(out, m)
		}
	}
	return out
}

// problemMail waits for the problem's email.
func (w *svcWorld) problemMail(code problems.Code) parsedMail {
	w.t.Helper()
	w.waitFor(fmt.Sprintf("the email of problem %s", code), func() bool { return len(w.problemMails(code)) > 0 })
	return w.problemMails(code)[0]
}
