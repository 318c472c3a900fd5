package realmail

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"
)

// greets returns a probe that connects to addr (through TLS when conf is not
// nil) and expects the server's first line to start with prefix.
func greets(addr string, conf *tls.Config, prefix string) func() error {
	return func() error {
		d := &net.Dialer{Timeout: time.Second}
		var conn net.Conn
		var err error
		if conf != nil {
			conn, err = tls.DialWithDialer(d, "tcp", addr, conf)
		} else {
			conn, err = d.Dial("tcp", addr)
		}
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading the greeting of %s: %w", addr, err)
		}
		if !strings.HasPrefix(line, prefix) {
			return fmt.Errorf("%s greeted %q, want %q", addr, strings.TrimSpace(line), prefix)
		}
		return nil
	}
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago. Another process may take one before the server binds it; Start
// then retries with new ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("realmail: finding a free port on 127.0.0.1: %w", err)
		}
		defer ln.Close() // held until all are chosen, so they differ
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
