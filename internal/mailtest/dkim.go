package mailtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
)

// DKIM signs messages for domains and answers the key lookups for them, as
// a fake DNS.
type DKIM struct {
	mu   sync.Mutex
	keys map[string]ed25519.PrivateKey // by "selector._domainkey.domain"
}

// NewDKIM returns a signer with no keys yet.
func NewDKIM() *DKIM { return &DKIM{keys: map[string]ed25519.PrivateKey{}} }

func recordName(domain, selector string) string {
	return selector + "._domainkey." + strings.ToLower(domain)
}

// Sign signs raw (CRLF line ends) for domain with selector, covering
// headers (From must be among them), and returns the signed message. The
// key is made on first use.
func (d *DKIM) Sign(t testing.TB, raw []byte, domain, selector string, headers ...string) []byte {
	t.Helper()
	d.mu.Lock()
	key, ok := d.keys[recordName(domain, selector)]
	if !ok {
		var err error
		if _, key, err = ed25519.GenerateKey(rand.Reader); err != nil {
			d.mu.Unlock()
			t.Fatal(err)
		}
		d.keys[recordName(domain, selector)] = key
	}
	d.mu.Unlock()
	var out bytes.Buffer
	err := dkim.Sign(&out, bytes.NewReader(raw), &dkim.SignOptions{
		Domain: domain, Selector: selector, Signer: key, HeaderKeys: headers,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed, BodyCanonicalization: dkim.CanonicalizationRelaxed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// LookupTXT answers DKIM key queries for the keys made so far.
func (d *DKIM) LookupTXT(name string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key, ok := d.keys[strings.ToLower(strings.TrimSuffix(name, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	pub := key.Public().(ed25519.PublicKey)
	return []string{fmt.Sprintf("v=DKIM1; k=ed25519; p=%s", base64.StdEncoding.EncodeToString(pub))}, nil
}

// CRLF turns LF line ends into CRLF, as mail on the wire has them.
func CRLF(s string) []byte {
	return []byte(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n"))
}
