package mailtest

import (
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeDNS runs a DNS server on a free loopback UDP port until the test ends
// and returns its address. It answers TXT questions from lookup (NXDOMAIN when
// lookup says the name is not found), so DKIM key lookups that go through a
// configured resolver (phone.yaml's dns_server) find test keys offline.
func ServeDNS(t testing.TB, lookup func(name string) ([]string, error)) string {
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
	return pc.LocalAddr().String()
}

// TXTRecords is a lookup over fixed records, for ServeDNS.
func TXTRecords(records map[string]string) func(string) ([]string, error) {
	return func(name string) ([]string, error) {
		if v, ok := records[name]; ok {
			return []string{v}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
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
