package realmail

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The two mailboxes every Start creates.
const (
	BotAddress   = "bot@agentkit.test" // the mailbot's own mailbox
	OwnerAddress = "owner@owner.test"  // the owner's (phone's) mailbox
)

// User is one mailbox on the test servers and the password that logs in to
// it, over IMAP and over SMTP submission alike.
type User struct {
	Address  string // also the login name
	Password string
}

// Servers are a Dovecot and a Postfix started by Start for one test, on
// 127.0.0.1, stopped with all their processes at the test's cleanup.
// The methods that take a testing.TB must be called from the test's
// goroutine; Deliver, Append, Messages, TLSConfig and Logs may be called
// from any.
type Servers struct {
	IMAPAddr  string // Dovecot IMAP (host:port) with STARTTLS (Dovecot deems loopback secure and allows LOGIN before it)
	IMAPSAddr string // Dovecot IMAP over implicit TLS
	SMTPAddr  string // Postfix submission: STARTTLS required, then AUTH (PLAIN, LOGIN)
	SMTPSAddr string // Postfix submission over implicit TLS
	LMTPAddr  string // Dovecot LMTP, where Postfix delivers; plain, no auth
	CAFile    string // PEM file of the throwaway CA that signed both servers' certificate
	Dir       string // the servers' configuration, certificates, logs, queue and mail

	Bot   User // BotAddress and its password
	Owner User // OwnerAddress and its password

	authAddr string // Dovecot's auth-client service, for Postfix's SASL
	ids      accountIDs
	roots    *x509.CertPool
	dovecot  *daemon
	postfix  *daemon
}

// Start starts Dovecot and Postfix on free loopback ports with throwaway
// configurations and two mailboxes, bot@agentkit.test and
// owner@owner.test, and stops them at t's cleanup. Postfix delivers mail for
// both to Dovecot over LMTP and authenticates through Dovecot. It skips t,
// saying why, when the servers are not installed (see InstallHint), the test
// is not root, or the system is not Linux.
func Start(t testing.TB) *Servers {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("realmail: skipping the real mail server test: the Dovecot and Postfix harness runs only on Linux")
	}
	bins, err := findBinaries(lookPath)
	if err != nil {
		t.Skipf("realmail: skipping the real mail server test: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("realmail: skipping the real mail server test: Dovecot and Postfix must be started as root (they drop privileges themselves); run the tests as root, as .ci/run does in CI")
	}
	ids, err := lookupAccounts()
	if err != nil {
		t.Fatal(err)
	}
	s, err := prepare(bins, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(t) })
	if err := retryOnPortClash(s.configureDovecot, s.startIMAP); err != nil {
		t.Fatal(err)
	}
	if err := retryOnPortClash(s.configurePostfix, s.startSMTP); err != nil {
		t.Fatal(err)
	}
	return s
}

// prepare creates the servers' directory, certificates and mailboxes.
func prepare(bins binaries, ids accountIDs) (s *Servers, err error) {
	dir, err := makeRoot()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	pki, err := newTestPKI("mail.agentkit.test")
	if err != nil {
		return nil, err
	}
	s = &Servers{
		Dir:    dir,
		CAFile: filepath.Join(dir, "ca.pem"),
		Bot:    User{Address: BotAddress, Password: newPassword()},
		Owner:  User{Address: OwnerAddress, Password: newPassword()},
		ids:    ids,
		roots:  x509.NewCertPool(),
	}
	s.roots.AppendCertsFromPEM(pki.caPEM)
	tlsDir, logDir := filepath.Join(dir, "tls"), filepath.Join(dir, "log")
	steps := []error{
		writeOwned(s.CAFile, pki.caPEM, 0o644, 0, 0),
		mkdirOwned(tlsDir, 0o700, 0, 0),
		writeOwned(filepath.Join(tlsDir, "cert.pem"), pki.certPEM, 0o600, 0, 0),
		writeOwned(filepath.Join(tlsDir, "key.pem"), pki.keyPEM, 0o600, 0, 0),
		writeOwned(filepath.Join(tlsDir, "chain.pem"), append(append([]byte{}, pki.keyPEM...), pki.certPEM...), 0o600, 0, 0),
		mkdirOwned(logDir, 0o700, 0, 0),
		mkdirOwned(filepath.Join(dir, "mail"), 0o700, ids.mailUID, ids.mailGID),
		mkdirOwned(filepath.Join(dir, "dovecot"), 0o711, 0, 0),
		mkdirOwned(filepath.Join(dir, "postfix"), 0o755, 0, 0),
	}
	if err := errors.Join(steps...); err != nil {
		return nil, err
	}
	s.dovecot = &daemon{
		name:    "Dovecot",
		path:    bins.dovecot,
		args:    []string{"-F", "-c", filepath.Join(dir, "dovecot", "dovecot.conf")},
		outFile: filepath.Join(logDir, "dovecot.out"),
		logFile: filepath.Join(logDir, "dovecot.log"),
	}
	s.postfix = &daemon{
		name:    "Postfix",
		path:    bins.master,
		args:    []string{"-c", filepath.Join(dir, "postfix"), "-d"}, // -d: stay in the group made for it
		outFile: filepath.Join(logDir, "postfix.out"),
		logFile: filepath.Join(logDir, "postfix.log"),
	}
	return s, nil
}

// TLSConfig returns a new client TLS configuration that trusts the servers'
// CA (the one in CAFile). The servers' certificate is valid for 127.0.0.1,
// localhost and mail.agentkit.test.
func (s *Servers) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}
}

// Logs returns the tail of both servers' logs, for a failing test's message.
func (s *Servers) Logs() string {
	return strings.TrimSpace(s.dovecot.diagnostics() + s.postfix.diagnostics())
}

// close kills both servers and removes their directory; at a failed test it
// first logs the servers' logs.
func (s *Servers) close(t testing.TB) {
	if err := errors.Join(s.dovecot.died(), s.postfix.died()); err != nil {
		t.Error(err)
	} else if t.Failed() {
		t.Logf("realmail: server logs:\n%s", s.Logs())
	}
	// Nothing the servers would still do is wanted: no graceful shutdown.
	if err := errors.Join(s.postfix.kill(), s.dovecot.kill()); err != nil {
		t.Error(err)
		return // leave the directory to the processes still using it
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Errorf("realmail: removing the servers' directory: %v", err)
	}
}

// hostPort is the loopback address of a port.
func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// port is the port of a host:port address.
func port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// newPassword returns a random password of 32 hex digits.
func newPassword() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
