package mailbot

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/secrets"
)

// A server that greets with 421 is busy, not misconfigured: the error must
// not send the owner to check ports and TLS modes.
func TestOpenSMTPBusyGreetingIsTemporary(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("421 4.3.2 Service not available, closing channel\r\n"))
			c.Close()
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	_, err = openSMTP(context.Background(), &net.Dialer{}, Server{Host: host, Port: p, TLS: TLSStartTLS, Username: "bot"}, secrets.NewPassword("pw"))
	if err == nil || !strings.Contains(err.Error(), "refuses connections for now") || strings.Contains(err.Error(), "check the port") {
		t.Fatalf("%v", err)
	}
}
