package mailbot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-msgauth/dkim"
)

// dnsTimeout bounds one DKIM key lookup through a configured server.
const dnsTimeout = 10 * time.Second

// MaxDKIMSignatures is how many DKIM signatures of one message are verified;
// the rest are ignored, so a message stuffed with signatures costs little.
const MaxDKIMSignatures = 5

// LookupTXTFunc returns the TXT records of a DNS name.
type LookupTXTFunc func(name string) ([]string, error)

// SignatureResult is what the bot's own verification found about one
// DKIM-Signature header, for the verdict and `agentkit phone log`.
type SignatureResult struct {
	Domain   string `json:"domain"`
	Selector string `json:"selector,omitempty"`
	// Result is pass, fail, temperror, permerror, or skipped (over the cap).
	Result string `json:"result"`
	// Error says why a signature did not verify.
	Error   string `json:"error,omitempty"`
	Aligned bool   `json:"aligned"`
	// BodyLength is true when the signature has an l= tag, which never counts.
	BodyLength bool `json:"body_length,omitempty"`
	// Unsigned lists headers the decision uses that h= does not cover.
	Unsigned []string `json:"unsigned,omitempty"`
	// SignsDate reports whether h= covers Date.
	SignsDate bool `json:"signs_date,omitempty"`
	// b is the b= value, whitespace removed (not shown: long and useless to read).
	b string
}

// dkimCheck is the outcome of the bot's own DKIM verification.
type dkimCheck struct {
	pass       bool
	domain     string // d= of the signature that passed
	signature  string // its b=, whitespace removed
	signsDate  bool
	results    []SignatureResult
	alignedBs  []string // b= of every signature whose d= aligns, verified or not
	reason     string
	lookupFail bool // a DNS error, not a bad signature
}

// sigTag is one DKIM-Signature header as parsed here (go-msgauth does not
// expose b=, s= or l=).
type sigTag struct {
	d, s, b string
	l       bool
	h       []string
}

func parseSigTags(v string) sigTag {
	var t sigTag
	for _, part := range strings.Split(v, ";") {
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		val = stripAllSpace(val)
		switch k {
		case "d":
			t.d = strings.ToLower(val)
		case "s":
			t.s = val
		case "b":
			t.b = val
		case "l":
			t.l = true
		case "h":
			for _, h := range strings.Split(val, ":") {
				t.h = append(t.h, strings.ToLower(h))
			}
		}
	}
	return t
}

func stripAllSpace(s string) string {
	if strings.IndexAny(s, " \t\r\n") < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// verifyDKIM verifies the message's DKIM signatures (at most
// MaxDKIMSignatures) and applies the rule: a pass whose d= aligns (relaxed)
// with the From domain, without l=, whose h= covers every header in need.
func verifyDKIM(raw []byte, fields []headerField, fromDomain string, need []string, lookup LookupTXTFunc) dkimCheck {
	var tags []sigTag
	for _, f := range fields {
		if f.key == "Dkim-Signature" {
			tags = append(tags, parseSigTags(f.value))
		}
	}
	var c dkimCheck
	for _, t := range tags {
		if alignedRelaxed(t.d, fromDomain) && t.b != "" {
			c.alignedBs = append(c.alignedBs, t.b)
		}
	}
	if len(tags) == 0 {
		c.reason = "the message has no DKIM signature"
		return c
	}
	opts := &dkim.VerifyOptions{MaxVerifications: MaxDKIMSignatures}
	if lookup != nil {
		opts.LookupTXT = lookup
	}
	verifs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), opts)
	if err != nil && !errors.Is(err, dkim.ErrTooManySignatures) {
		c.reason = "DKIM verification could not read the message: " + err.Error()
		return c
	}
	checked := min(len(tags), MaxDKIMSignatures)
	if len(verifs) != checked {
		c.reason = fmt.Sprintf("DKIM verification saw %d signatures where the header has %d; refusing to guess which is which", len(verifs), checked)
		return c
	}
	var why []string
	for i, t := range tags {
		r := SignatureResult{Domain: t.d, Selector: t.s, Aligned: alignedRelaxed(t.d, fromDomain), BodyLength: t.l, b: t.b}
		if i >= checked {
			r.Result = "skipped"
			r.Error = fmt.Sprintf("only the first %d signatures are verified", MaxDKIMSignatures)
			c.results = append(c.results, r)
			continue
		}
		v := verifs[i]
		if !strings.EqualFold(v.Domain, t.d) {
			c.reason = "DKIM verification and the header disagree about signature domains; refusing to guess"
			return dkimCheck{reason: c.reason, alignedBs: c.alignedBs}
		}
		switch {
		case v.Err == nil:
			r.Result = "pass"
		case dkim.IsTempFail(v.Err):
			r.Result, r.Error = "temperror", v.Err.Error()
			c.lookupFail = true
		case dkim.IsPermFail(v.Err):
			r.Result, r.Error = "permerror", v.Err.Error()
		default:
			r.Result, r.Error = "fail", v.Err.Error()
		}
		signed := map[string]bool{}
		for _, h := range v.HeaderKeys {
			signed[strings.ToLower(strings.TrimSpace(h))] = true
		}
		r.SignsDate = signed["date"]
		for _, h := range need {
			if !signed[strings.ToLower(h)] {
				r.Unsigned = append(r.Unsigned, h)
			}
		}
		c.results = append(c.results, r)

		switch {
		case r.Result != "pass":
			why = append(why, fmt.Sprintf("signature by %s: %s (%s)", t.d, r.Result, r.Error))
		case !r.Aligned:
			why = append(why, fmt.Sprintf("signature by %s passes but is not aligned with %s", t.d, fromDomain))
		case t.l:
			why = append(why, fmt.Sprintf("signature by %s has l= (signs only part of the body), which never counts", t.d))
		case len(r.Unsigned) > 0:
			why = append(why, fmt.Sprintf("signature by %s does not sign %s, which the decision reads", t.d, strings.Join(r.Unsigned, ", ")))
		case !c.pass:
			c.pass, c.domain, c.signature, c.signsDate = true, t.d, t.b, r.SignsDate
			c.reason = fmt.Sprintf("DKIM signature by %s (selector %s) verified, aligned with %s, signing %s", t.d, t.s, fromDomain, strings.Join(need, ", "))
		}
	}
	if !c.pass {
		c.reason = strings.Join(why, "; ")
	}
	return c
}

// NewLookupTXT returns a TXT lookup through the DNS server at addr
// ("host:port"), or through the system resolver when addr is "".
func NewLookupTXT(addr string) LookupTXTFunc {
	if addr == "" {
		return net.LookupTXT
	}
	r := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	return func(name string) ([]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), dnsTimeout)
		defer cancel()
		return r.LookupTXT(ctx, name)
	}
}
