package mailbot

import (
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/mailtest"
)

// TestNewLookupTXTUsesConfiguredServer: dns_server points DKIM key lookups
// at a resolver of the owner's choice; here one on loopback, and a reply
// signed with RSA-2048 (a key record longer than one TXT string) verifies
// through it.
func TestNewLookupTXTUsesConfiguredServer(t *testing.T) {
	keys()
	addr := mailtest.ServeDNS(t, mailtest.TXTRecords(map[string]string{"rsa._domainkey.owner.test": ownerRSA.txt}))
	lookup := NewLookupTXT(addr)
	got, err := lookup("rsa._domainkey.owner.test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != ownerRSA.txt {
		t.Fatalf("got %q", got)
	}
	if _, err := lookup("missing._domainkey.owner.test"); err == nil {
		t.Error("a missing name resolved")
	}

	cfg := testConfig()
	cfg.DNSServer = addr
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	raw := sign(t, msg(recentHeaders("dns1@mail.owner.test"), retryBody), ownerRSA, nil)
	v, err := Decide(raw, testNow, cfg, Deps{Now: func() time.Time { return testNow }, Facts: newFakeFacts()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Outcome != OutcomeAct || v.Auth.Path != "dkim" {
		t.Fatalf("%s (%s)", v.Outcome, v.Reason)
	}
}

func TestVerifyDKIMCapsSignatures(t *testing.T) {
	keys()
	// Six signatures by the attacker on top of the owner's genuine one:
	// only MaxDKIMSignatures are verified, and the owner's is not reached.
	raw := genuineSigned(t, "cap1@mail.owner.test")
	for i := 0; i < 6; i++ {
		raw = sign(t, raw, attackerEd, []string{"From"})
	}
	m, err := parseMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := verifyDKIM(raw, m.fields, "owner.test", []string{"From", "Date", "Message-ID"}, newFakeDNS().LookupTXT)
	if c.pass {
		t.Fatal("a signature past the cap was used")
	}
	if len(c.results) != 7 || c.results[6].Result != "skipped" || c.results[0].Result != "pass" || c.results[0].Aligned {
		t.Errorf("results %+v", c.results)
	}
	if len(c.alignedBs) != 1 {
		t.Errorf("the owner's signature must still be known for replay checks: %d", len(c.alignedBs))
	}
}
