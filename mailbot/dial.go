package mailbot

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
)

// tlsConfigFor returns the TLS settings for a server: certificates are always
// verified, against the system's roots plus the configured CA file.
func tlsConfigFor(s Server) (*tls.Config, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA file %s (ca_file in phone.yaml): %w", s.CAFile, err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate; point ca_file at the server's CA certificate", s.CAFile)
		}
	}
	return &tls.Config{
		ServerName: strings.Trim(s.Host, "[]"),
		RootCAs:    pool,
		MinVersion: tls.VersionTLS12,
	}, nil
}

// dialer opens TCP connections; tests and the service may replace it.
type dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// dialServer connects to a server and, for implicit TLS, completes the
// handshake. STARTTLS is left to the protocol; none is refused unless the
// server is on a loopback address.
func dialServer(ctx context.Context, d dialer, s Server, what string) (net.Conn, *tls.Config, error) {
	if s.TLS == TLSNone && !isLoopbackHost(s.Host) {
		return nil, nil, fmt.Errorf("%s: tls none is allowed only to a loopback address, not %s; set tls to implicit or starttls in phone.yaml", what, s.Host)
	}
	var tc *tls.Config
	if s.TLS != TLSNone {
		var err error
		if tc, err = tlsConfigFor(s); err != nil {
			return nil, nil, err
		}
	}
	conn, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the %s server %s: %w", what, s.Addr(), err)
	}
	if s.TLS == TLSImplicit {
		tconn := tls.Client(conn, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("TLS with the %s server %s (check the host name, port and tls mode; a private CA needs ca_file): %w", what, s.Addr(), err)
		}
		return tconn, tc, nil
	}
	return conn, tc, nil
}
