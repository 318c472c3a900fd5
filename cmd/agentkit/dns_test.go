package main_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/agentkit/agentkit/internal/mailtest"
	"github.com/agentkit/agentkit/mailbot"
)

// fakeDNS is a DNS server on 127.0.0.1 (UDP) that answers TXT queries from
// a lookup function, so the service's DKIM lookups (phone.yaml's
// dns_server) find test keys without a network.
type fakeDNS struct {
	Addr string
}

// startDNS serves lookup on a free loopback UDP port until the test ends.
func startDNS(t testing.TB, lookup func(name string) ([]string, error)) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, err := answerDNS(buf[:n], lookup); err == nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return &fakeDNS{Addr: pc.LocalAddr().String()}
}

// answerDNS builds the response to one query: the TXT records lookup gives,
// NXDOMAIN when it finds none, and an empty answer for other types.
func answerDNS(query []byte, lookup func(string) ([]string, error)) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	var answers []string
	if q.Type == dnsmessage.TypeTXT {
		txt, err := lookup(strings.TrimSuffix(q.Name.String(), "."))
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			rh.RCode = dnsmessage.RCodeNameError
		case err != nil:
			rh.RCode = dnsmessage.RCodeServerFailure
		default:
			answers = txt
		}
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, a := range answers {
		// A TXT record's strings hold at most 255 bytes each.
		var parts []string
		for len(a) > 255 {
			parts, a = append(parts, a[:255]), a[255:]
		}
		parts = append(parts, a)
		err := b.TXTResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.TXTResource{TXT: parts})
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

func TestFakeDNSServesDKIMKeys(t *testing.T) {
	keys := mailtest.NewDKIM()
	keys.Sign(t, mailtest.CRLF("From: me@home.test\nSubject: x\n\nbody\n"), "home.test", "s1", "From")
	dns := startDNS(t, keys.LookupTXT)
	lookup := mailbot.NewLookupTXT(dns.Addr)
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
