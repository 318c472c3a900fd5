package mailbot

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
)

// The test world: the owner at owner.test, the bot's mailbox at a provider
// whose receiving hosts are *.mail.provider.test, and two problems.
const (
	ownerAddr    = "jane@owner.test"
	botAddr      = "bot@bot.test"
	ownMIDDomain = "agentkit.bot.test"
	code1        = "BCDFGH"
	code2        = "KXTRZB"
	problem1MID  = "p1." + code1 + "@" + ownMIDDomain
	problem2MID  = "p2." + code2 + "@" + ownMIDDomain
	providerID   = "mx1.mail.provider.test"
	providerHost = "mx2.mail.provider.test"
)

// testNow is the fixed clock of every test.
var testNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func testConfig() *Config {
	c := DefaultConfig()
	c.BotAddress = botAddr
	c.OwnerAddresses = []string{ownerAddr}
	c.IMAP.Host, c.SMTP.Host = "imap.provider.test", "smtp.provider.test"
	c.TrustedAuthservIDs = []string{"*.mail.provider.test"}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return &c
}

// testKey is one signing key and its DNS record.
type testKey struct {
	domain, selector string
	signer           crypto.Signer
	txt              string
}

var (
	keysOnce sync.Once
	// ownerEd is owner.test's ed25519 key (fixed seed, so committed fuzz
	// seeds keep verifying); ownerRSA its RSA-2048 key; attackerEd signs for
	// attacker.test; ownerUnpublished signs as owner.test with a key that is
	// not in DNS.
	ownerEd, ownerRSA, attackerEd, ownerUnpublished, publicSuffixEd *testKey
)

func newEdKey(domain, selector string, seed byte) *testKey {
	s := bytes.Repeat([]byte{seed}, ed25519.SeedSize)
	k := ed25519.NewKeyFromSeed(s)
	pub := k.Public().(ed25519.PublicKey)
	return &testKey{domain, selector, k, "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)}
}

func keys() {
	keysOnce.Do(func() {
		ownerEd = newEdKey("owner.test", "ed", 1)
		attackerEd = newEdKey("attacker.test", "ed", 2)
		ownerUnpublished = newEdKey("owner.test", "gone", 3)
		publicSuffixEd = newEdKey("test", "ed", 4)
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		der, err := x509.MarshalPKIXPublicKey(&rk.PublicKey)
		if err != nil {
			panic(err)
		}
		ownerRSA = &testKey{"owner.test", "rsa", rk, "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)}
	})
}

// fakeDNS serves the published keys; a name in fail gives a temporary error.
type fakeDNS struct {
	txt  map[string]string
	fail map[string]bool
}

func newFakeDNS() *fakeDNS {
	keys()
	d := &fakeDNS{txt: map[string]string{}, fail: map[string]bool{}}
	for _, k := range []*testKey{ownerEd, ownerRSA, attackerEd, publicSuffixEd} {
		d.txt[k.selector+"._domainkey."+k.domain] = k.txt
	}
	return d
}

func (d *fakeDNS) LookupTXT(name string) ([]string, error) {
	if d.fail[name] {
		return nil, &net.DNSError{Err: "server misbehaving", Name: name, IsTemporary: true}
	}
	if v, ok := d.txt[name]; ok {
		return []string{v}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// fakeFacts is the store's view in tests.
type fakeFacts struct {
	processed    map[string]bool
	processedSig map[string]bool
	problems     map[string]string // Message-ID -> code
	err          error
}

func newFakeFacts() *fakeFacts {
	return &fakeFacts{
		processed:    map[string]bool{},
		processedSig: map[string]bool{},
		problems:     map[string]string{problem1MID: code1, problem2MID: code2},
	}
}

func (f *fakeFacts) IsProcessed(id string) (bool, error)         { return f.processed[id], f.err }
func (f *fakeFacts) IsProcessedSignature(b string) (bool, error) { return f.processedSig[b], f.err }
func (f *fakeFacts) ProblemByMessageID(id string) (string, bool, error) {
	c, ok := f.problems[id]
	return c, ok, f.err
}
func (f *fakeFacts) OwnMessageIDDomain() string { return ownMIDDomain }

// remember stores a verdict the way the store will.
func (f *fakeFacts) remember(v Verdict) {
	if v.Remember {
		f.processed[v.MessageID] = true
		if v.Signature != "" {
			f.processedSig[v.Signature] = true
		}
	}
}

var _ Facts = (*fakeFacts)(nil)

// msg builds a raw message from header lines (top first) and a body, with
// CRLF line ends.
func msg(headers []string, body string) []byte {
	var b strings.Builder
	for _, h := range headers {
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(h, "\r\n", "\n"), "\n", "\r\n"))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n"))
	return []byte(b.String())
}

// replyHeaders are the headers of a typical reply to problem 1.
func replyHeaders(date time.Time, mid string) []string {
	return []string{
		"From: Jane Doe <" + ownerAddr + ">",
		"To: agentkit <" + botAddr + ">",
		"Subject: Re: [agentkit] " + code1 + " web: gate failed",
		"Date: " + date.Format(time.RFC1123Z),
		"Message-ID: <" + mid + ">",
		"In-Reply-To: <" + problem1MID + ">",
		"References: <" + problem1MID + ">",
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=utf-8",
	}
}

const quotedProblem = `On Tue, Mar 10, 2026 at 11:50 AM agentkit <bot@bot.test> wrote:
> [agentkit] BCDFGH web: gate failed
>
> The fast gate failed after the automatic retry.
>
> Reply with one of:
> retry - run the stopped step again
> hint <words> - continue the same session with your words
> skip - cancel the task and what depends on it
`

// standardHeaderKeys is what common providers sign.
var standardHeaderKeys = []string{"From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References", "MIME-Version", "Content-Type"}

// sign prepends a DKIM-Signature by k over headerKeys (nil: the standard set).
func sign(t testing.TB, raw []byte, k *testKey, headerKeys []string) []byte {
	t.Helper()
	if headerKeys == nil {
		headerKeys = standardHeaderKeys
	}
	var out bytes.Buffer
	err := dkim.Sign(&out, bytes.NewReader(raw), &dkim.SignOptions{
		Domain: k.domain, Selector: k.selector, Signer: k.signer,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             headerKeys,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// signWithBodyLength prepends a valid ed25519 DKIM-Signature carrying l=
// (covering only the first bodyLen bytes of the relaxed body), which
// go-msgauth cannot write.
func signWithBodyLength(t testing.TB, raw []byte, k *testKey, headerKeys []string, bodyLen int) []byte {
	t.Helper()
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatal("no body")
	}
	cb := relaxedBody(string(body))
	if bodyLen > len(cb) {
		t.Fatalf("l=%d beyond the body (%d)", bodyLen, len(cb))
	}
	bh := sha256.Sum256([]byte(cb[:bodyLen]))
	sigHeader := fmt.Sprintf("DKIM-Signature: v=1; a=ed25519-sha256; c=relaxed/relaxed; d=%s; s=%s; l=%d; h=%s; bh=%s; b=",
		k.domain, k.selector, bodyLen, strings.ToLower(strings.Join(headerKeys, ":")), base64.StdEncoding.EncodeToString(bh[:]))
	fields := splitFields(string(head) + "\r\n")
	h := sha256.New()
	used := map[string]int{}
	for _, key := range headerKeys {
		// the bottom-most unused instance, as RFC 6376 §5.4.2 says
		seen := 0
		for i := len(fields) - 1; i >= 0; i-- {
			name, _, _ := strings.Cut(fields[i], ":")
			if !strings.EqualFold(strings.TrimSpace(name), key) {
				continue
			}
			if seen == used[strings.ToLower(key)] {
				h.Write([]byte(relaxedHeader(fields[i])))
				used[strings.ToLower(key)]++
				break
			}
			seen++
		}
	}
	h.Write([]byte(strings.TrimSuffix(relaxedHeader(sigHeader+"\r\n"), "\r\n")))
	sig := ed25519.Sign(k.signer.(ed25519.PrivateKey), h.Sum(nil))
	return append([]byte(sigHeader+base64.StdEncoding.EncodeToString(sig)+"\r\n"), raw...)
}

func splitFields(head string) []string {
	var out []string
	for _, line := range strings.SplitAfter(head, "\r\n") {
		if line == "" {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1] += line
		} else {
			out = append(out, line)
		}
	}
	return out
}

var wspRun = regexp.MustCompile(`[ \t]+`)

func relaxedHeader(f string) string {
	name, value, _ := strings.Cut(f, ":")
	value = strings.ReplaceAll(value, "\r\n", "")
	value = strings.TrimSpace(wspRun.ReplaceAllString(value, " "))
	return strings.ToLower(strings.TrimSpace(name)) + ":" + value + "\r\n"
}

func relaxedBody(b string) string {
	lines := strings.Split(b, "\r\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(wspRun.ReplaceAllString(l, " "), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\r\n") + "\r\n"
}

// prepend adds header lines on top, as a receiving server does.
func prepend(raw []byte, headers ...string) []byte {
	var b bytes.Buffer
	for _, h := range headers {
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(h, "\r\n", "\n"), "\n", "\r\n"))
		b.WriteString("\r\n")
	}
	b.Write(raw)
	return b.Bytes()
}

// delivered adds what the provider adds on receipt from the owner's server:
// its Authentication-Results above its inbound Received header.
func delivered(raw []byte, authres string) []byte {
	return prepend(raw,
		"Authentication-Results: "+providerID+";\n\t"+authres,
		"Received: from mail.owner.test (mail.owner.test [192.0.2.10])\n\tby "+providerHost+" (Postfix) with ESMTPS id 4F2A1;\n\tTue, 10 Mar 2026 11:55:02 +0000 (UTC)",
	)
}

// decideWith runs Decide with the fake DNS and facts at testNow.
func decideWith(t testing.TB, raw []byte, cfg *Config, dns *fakeDNS, facts *fakeFacts) Verdict {
	t.Helper()
	if cfg == nil {
		cfg = testConfig()
	}
	if dns == nil {
		dns = newFakeDNS()
	}
	if facts == nil {
		facts = newFakeFacts()
	}
	v, err := Decide(raw, testNow.Add(-2*time.Minute), cfg, Deps{
		Now: func() time.Time { return testNow }, LookupTXT: dns.LookupTXT, Facts: facts,
	})
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return v
}

var errStore = errors.New("store unavailable")
