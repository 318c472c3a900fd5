package mailbot

import (
	"testing"
	"time"
)

// benchMessages are signed phone replies, RSA-2048 as most providers sign.
func benchMessages(b *testing.B) [][]byte {
	keys()
	var out [][]byte
	for _, name := range []string{"gmail_web", "apple_iphone", "outlook_desktop", "gmail_android"} {
		out = append(out, sign(b, readFixture(b, name), ownerRSA, nil))
	}
	return out
}

// BenchmarkVerdictSigned measures the whole decision on signed replies:
// MIME parsing, reply trimming, DKIM verification (fake DNS) and the grammar.
func BenchmarkVerdictSigned(b *testing.B) {
	msgs := benchMessages(b)
	cfg := testConfig()
	dns := newFakeDNS()
	facts := newFakeFacts()
	deps := Deps{Now: func() time.Time { return testNow }, LookupTXT: dns.LookupTXT, Facts: facts}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		v, err := Decide(msgs[i%len(msgs)], testNow, cfg, deps)
		if err != nil || v.Outcome != OutcomeAct {
			b.Fatalf("%v %s %s", err, v.Outcome, v.Reason)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkVerdictSignedParallel runs Decide on every core (Decide keeps no
// state between calls, so a backlog can be decided in parallel).
func BenchmarkVerdictSignedParallel(b *testing.B) {
	msgs := benchMessages(b)
	cfg := testConfig()
	dns := newFakeDNS()
	facts := newFakeFacts()
	deps := Deps{Now: func() time.Time { return testNow }, LookupTXT: dns.LookupTXT, Facts: facts}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			v, err := Decide(msgs[i%len(msgs)], testNow, cfg, deps)
			if err != nil || v.Outcome != OutcomeAct {
				b.Errorf("%v %s %s", err, v.Outcome, v.Reason)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkDKIMVerifyOnly is the verification alone, the part python3-dkim does.
func BenchmarkDKIMVerifyOnly(b *testing.B) {
	msgs := benchMessages(b)
	dns := newFakeDNS()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		raw := msgs[i%len(msgs)]
		m, _ := parseMessage(raw)
		if c := verifyDKIM(raw, m.fields, "owner.test", []string{"From"}, dns.LookupTXT); !c.pass {
			b.Fatal(c.reason)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkTrimReply is the reply extraction alone.
func BenchmarkTrimReply(b *testing.B) {
	m, err := parseMessage(readFixture(b, "gmail_web"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		TrimReply(m.text)
	}
}
