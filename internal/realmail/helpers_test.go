package realmail_test

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/agentkit/agentkit/internal/realmail"
)

// waitTimeout bounds every wait for a server to act; generous, since a
// wait that succeeds returns at once.
const waitTimeout = 30 * time.Second

// caTLS loads the CA from s.CAFile, as a mail client configured with the
// path of a CA file does.
func caTLS(t *testing.T, s *realmail.Servers) *tls.Config {
	t.Helper()
	pemBytes, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("no certificate in %s", s.CAFile)
	}
	return &tls.Config{RootCAs: roots}
}

// counter follows a selected mailbox's message count from the server's
// unilateral EXISTS responses.
type counter struct {
	mu      sync.Mutex
	n       uint32
	changed chan struct{}
}

func newCounter() *counter { return &counter{changed: make(chan struct{}, 1)} }

// handler is the client's unilateral data handler; it never blocks.
func (c *counter) handler() *imapclient.UnilateralDataHandler {
	return &imapclient.UnilateralDataHandler{
		Mailbox: func(data *imapclient.UnilateralDataMailbox) {
			if data.NumMessages == nil {
				return
			}
			c.mu.Lock()
			c.n = *data.NumMessages
			c.mu.Unlock()
			select {
			case c.changed <- struct{}{}:
			default:
			}
		},
	}
}

// waitAtLeast waits until the server has announced at least want messages.
func (c *counter) waitAtLeast(t *testing.T, want uint32) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := c.n
		c.mu.Unlock()
		if n >= want {
			return
		}
		select {
		case <-c.changed:
		case <-deadline.C:
			t.Fatalf("the server announced %d messages after %v, want %d", n, waitTimeout, want)
		}
	}
}

// login connects over STARTTLS, verifying the certificate against CAFile,
// and logs in as u; the connection is closed at cleanup.
func login(t *testing.T, s *realmail.Servers, u realmail.User, handler *imapclient.UnilateralDataHandler) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{TLSConfig: caTLS(t, s), UnilateralDataHandler: handler})
	if err != nil {
		t.Fatalf("connecting to Dovecot with STARTTLS: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(u.Address, u.Password).Wait(); err != nil {
		t.Fatalf("logging in as %s: %v", u.Address, err)
	}
	return c
}

// selectInbox selects INBOX and returns what the server said about it.
func selectInbox(t *testing.T, c *imapclient.Client) *imap.SelectData {
	t.Helper()
	data, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("SELECT INBOX: %v", err)
	}
	return data
}

// fetchAll fetches the UID, flags and envelope of every message in the
// selected mailbox.
func fetchAll(t *testing.T, c *imapclient.Client) []*imapclient.FetchMessageBuffer {
	t.Helper()
	var all imap.SeqSet
	all.AddRange(1, 0) // 1:*
	msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, Envelope: true}).Collect()
	if err != nil {
		t.Fatalf("FETCH 1:*: %v", err)
	}
	return msgs
}

// newMessage returns a message with a unique Message-ID, and that ID.
func newMessage(from, to, subject, body string) (msg []byte, messageID string) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	messageID = hex.EncodeToString(b) + "@agentkit.test"
	msg = fmt.Appendf(nil, "From: <%s>\r\nTo: <%s>\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		from, to, subject, time.Now().Format(time.RFC1123Z), messageID, body)
	return msg, messageID
}

// deliver delivers a new message to u over LMTP and returns its Message-ID.
func deliver(t *testing.T, s *realmail.Servers, u realmail.User, subject string) string {
	t.Helper()
	msg, id := newMessage(s.Owner.Address, u.Address, subject, "body of "+subject)
	if err := s.Deliver(s.Owner.Address, u.Address, msg); err != nil {
		t.Fatal(err)
	}
	return id
}

// hasFlag reports whether flags holds f, ignoring case as IMAP does.
func hasFlag(flags []imap.Flag, f imap.Flag) bool {
	for _, g := range flags {
		if strings.EqualFold(string(g), string(f)) {
			return true
		}
	}
	return false
}

// waitForLog waits until the servers' logs mention what.
func waitForLog(t *testing.T, s *realmail.Servers, what string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !strings.Contains(s.Logs(), what) {
		if time.Now().After(deadline) {
			t.Fatalf("the server logs do not mention %q after %v", what, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
}
