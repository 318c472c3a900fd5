package main_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/mailbot"
)

func TestFakeDNSServesDKIMKeys(t *testing.T) {
	keys := mailtest.NewDKIM()
	keys.Sign(t, mailtest.CRLF("From: me@home.test\nSubject: x\n\nbody\n"), "home.test", "s1", "From")
	lookup := mailbot.NewLookupTXT(mailtest.ServeDNS(t, keys.LookupTXT))
	txt, err := lookup("s1._domainkey.home.test")
	want, _ := keys.LookupTXT("s1._domainkey.home.test")
	if err != nil || strings.Join(txt, "") != want[0] {
		t.Fatalf("got %q %v, want %q", txt, err, want)
	}
	_, err = lookup("nope._domainkey.home.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("a missing key: %v", err)
	}
}
