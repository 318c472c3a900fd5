package phonesetup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// Step names one verification step.
type Step string

// The verification steps, in the order they run for each server.
const (
	StepDNS   Step = "DNS"
	StepTCP   Step = "TCP"
	StepTLS   Step = "TLS"
	StepLogin Step = "login"
	StepIdle  Step = "IDLE"
)

// Check is the outcome of one step against one server.
type Check struct {
	// Server is "IMAP" or "SMTP".
	Server string
	Step   Step
	OK     bool
	// Line says in one line what was found, or what is wrong and what to do.
	Line string
}

func (c Check) String() string { return fmt.Sprintf("%s %s: %s", c.Server, c.Step, c.Line) }

// Failure is the check that stopped a verification.
type Failure struct{ Check }

func (f *Failure) Error() string { return f.Check.String() }

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// Verifier proves that the settings and the password work: DNS, TCP, TLS,
// IMAP login (and whether IDLE is offered), SMTP login. It sends no mail.
type Verifier struct {
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// Dial defaults to a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds each step; default 20s.
	Timeout time.Duration
	// Now is the clock used to explain certificate dates; default time.Now.
	Now func() time.Time
	// Report receives every check as it finishes, the failing one included.
	Report func(Check)
	// LoginHint says where the provider's app passwords are made; it ends
	// the line of a refused login.
	LoginHint string
}

// Verify checks IMAP then SMTP. It returns nil or a *Failure.
func (v *Verifier) Verify(ctx context.Context, c *mailbot.Config, pw secrets.Password) error {
	if err := v.VerifyIMAP(ctx, c.IMAP, pw, c.PollInterval.D()); err != nil {
		return err
	}
	return v.VerifySMTP(ctx, c.SMTP, pw)
}

func (v *Verifier) timeout() time.Duration {
	if v.Timeout > 0 {
		return v.Timeout
	}
	return 20 * time.Second
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// run is one server's verification in progress.
type run struct {
	v      *Verifier
	server string // IMAP or SMTP
	flag   string // imap or smtp: the flag prefix named in advice
	s      mailbot.Server
	bc     *boundedConn
	stop   func() bool // stops closing the connection when ctx ends
	// readOnly opens INBOX with EXAMINE (verification changes nothing).
	readOnly bool
}

func (r *run) ok(step Step, format string, args ...any) {
	if r.v.Report != nil {
		r.v.Report(Check{Server: r.server, Step: step, OK: true, Line: fmt.Sprintf(format, args...)})
	}
}

func (r *run) fail(step Step, format string, args ...any) error {
	c := Check{Server: r.server, Step: step, Line: fmt.Sprintf(format, args...)}
	if r.v.Report != nil {
		r.v.Report(c)
	}
	return &Failure{c}
}

// connect runs the DNS, TCP and (for implicit TLS) TLS steps and returns the
// connection; for STARTTLS the caller upgrades it.
func (r *run) connect(ctx context.Context) (net.Conn, error) {
	host := r.s.Host
	var addrs []string
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		addrs = []string{ip.String()}
		r.ok(StepDNS, "%s is an address; nothing to look up", host)
	} else {
		res := r.v.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		lctx, cancel := context.WithTimeout(ctx, r.v.timeout())
		var err error
		addrs, err = res.LookupHost(lctx, host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return nil, r.fail(StepDNS, "%s", explainDNS(err, host, r.flag))
		}
		more := ""
		if len(addrs) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(addrs)-1)
		}
		r.ok(StepDNS, "%s is %s%s", host, addrs[0], more)
	}

	dial := r.v.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	port := fmt.Sprint(r.s.Port)
	var conn net.Conn
	var firstErr error
	for _, a := range addrs {
		dctx, cancel := context.WithTimeout(ctx, r.v.timeout())
		c, err := dial(dctx, "tcp", net.JoinHostPort(a, port))
		cancel()
		if err == nil {
			conn = c
			break
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if conn == nil {
		return nil, r.fail(StepTCP, "%s", explainDial(firstErr, host, r.s.Port, r.v.timeout(), r.server, r.flag))
	}
	r.ok(StepTCP, "connected to %s", conn.RemoteAddr())
	r.bc = &boundedConn{Conn: conn}
	conn = r.bc
	r.stop = context.AfterFunc(ctx, func() { r.bc.Close() })

	if r.s.TLS != mailbot.TLSImplicit {
		return conn, nil
	}
	cfg, err := r.tlsConfig()
	if err != nil {
		r.close()
		return nil, err
	}
	tc := tls.Client(conn, cfg)
	r.deadline()
	if err := tc.Handshake(); err != nil {
		r.close()
		return nil, r.tlsFailure(err)
	}
	r.tlsOK(tc.ConnectionState())
	return tc, nil
}

// tlsConfig trusts the system's authorities and the configured CA file.
func (r *run) tlsConfig() (*tls.Config, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if r.s.CAFile != "" {
		pem, err := os.ReadFile(r.s.CAFile)
		if err != nil {
			return nil, r.fail(StepTLS, "the CA file %s cannot be read (%v); give a readable PEM file with --%s-ca", r.s.CAFile, unwrapPath(err), r.flag)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, r.fail(StepTLS, "the CA file %s holds no PEM certificate; give the server's CA certificate with --%s-ca", r.s.CAFile, r.flag)
		}
	}
	return &tls.Config{ServerName: strings.Trim(r.s.Host, "[]"), RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

func (r *run) tlsFailure(err error) error {
	return r.fail(StepTLS, "%s", explainTLS(err, r.s, r.server, r.flag, r.v.timeout(), r.v.now()))
}

func (r *run) tlsOK(st tls.ConnectionState) {
	if len(st.PeerCertificates) == 0 {
		r.ok(StepTLS, "%s", tls.VersionName(st.Version))
		return
	}
	leaf := st.PeerCertificates[0]
	r.ok(StepTLS, "%s, certificate for %s from %s, valid until %s", tls.VersionName(st.Version), r.s.Host, issuerName(leaf), leaf.NotAfter.Format("2006-01-02"))
}

// issuerName names who signed c, like "R11 (Let's Encrypt)".
func issuerName(c *x509.Certificate) string {
	cn, org := c.Issuer.CommonName, ""
	if len(c.Issuer.Organization) > 0 {
		org = c.Issuer.Organization[0]
	}
	switch {
	case cn != "" && org != "" && cn != org:
		return fmt.Sprintf("%q (%s)", cn, org)
	case cn != "":
		return fmt.Sprintf("%q", cn)
	case org != "":
		return fmt.Sprintf("%q", org)
	}
	return fmt.Sprintf("%q", c.Issuer.String())
}

// deadline bounds the next exchange on the connection, whatever deadlines
// the protocol library sets itself.
func (r *run) deadline() {
	r.bc.limit(time.Now().Add(r.v.timeout()))
}

// close ends the connection and its watch on ctx.
func (r *run) close() {
	if r.stop != nil {
		r.stop()
	}
	if r.bc != nil {
		r.bc.Close()
	}
}

// boundedConn caps every deadline set on it (by go-smtp, which sets five
// minutes, or by crypto/tls) at the verification's own limit, so a server
// that never answers fails the step in time.
type boundedConn struct {
	net.Conn
	mu  sync.Mutex
	max time.Time
}

func (b *boundedConn) limit(t time.Time) {
	b.mu.Lock()
	b.max = t
	b.mu.Unlock()
	_ = b.Conn.SetDeadline(t)
}

func (b *boundedConn) capped(t time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max.IsZero() || (!t.IsZero() && t.Before(b.max)) {
		return t
	}
	return b.max
}

func (b *boundedConn) SetDeadline(t time.Time) error     { return b.Conn.SetDeadline(b.capped(t)) }
func (b *boundedConn) SetReadDeadline(t time.Time) error { return b.Conn.SetReadDeadline(b.capped(t)) }
func (b *boundedConn) SetWriteDeadline(t time.Time) error {
	return b.Conn.SetWriteDeadline(b.capped(t))
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
