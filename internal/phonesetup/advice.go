package phonesetup

import (
	"bytes"
	"fmt"
	"net/mail"
	"strings"

	"github.com/agentkit/agentkit/mailbot"
)

// Stamp is one Authentication-Results header found in a reply.
type Stamp struct {
	// AuthservID is who wrote it ("" when the header names nobody).
	AuthservID string `json:"authserv_id"`
	// Trusted is whether trusted_authserv_ids holds it.
	Trusted bool `json:"trusted"`
	// Results are its dkim, spf and dmarc results, like "dkim=pass
	// (header.d=home.example) spf=pass dmarc=pass".
	Results string `json:"results"`
	// Passes is whether one of them passed for the From domain.
	Passes bool `json:"passes"`
}

// Advice is what phone test concludes from the owner's test reply.
type Advice struct {
	// Obeyed is true when replies from this phone will be obeyed.
	Obeyed bool `json:"obeyed"`
	// Lines say so, or exactly why not and which setting to change.
	Lines []string `json:"lines"`
	// Stamps are the reply's Authentication-Results headers, top first.
	Stamps []Stamp `json:"stamps"`
	// InboundHost is the by host of the topmost Received header.
	InboundHost string `json:"inbound_host,omitempty"`
}

// Obeyed is the sentence phone test ends with when all is well.
const Obeyed = "replies from this phone will be obeyed"

// Advise reads the owner's reply to the test email and the verdict on it.
func Advise(raw []byte, cfg *mailbot.Config, v mailbot.Verdict) Advice {
	var a Advice
	hdr := readHeader(raw)
	from := v.From
	if from == "" {
		if addrs, err := mail.ParseAddressList(hdr.Get("From")); err == nil && len(addrs) == 1 {
			from = addrs[0].Address
		}
	}
	fromDomain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
	for _, value := range hdr["Authentication-Results"] {
		ar, err := mailbot.ParseAuthResults(value)
		if err != nil {
			continue
		}
		st := Stamp{AuthservID: strings.ToLower(ar.AuthservID), Trusted: ar.AuthservID != "" && matchPattern(strings.ToLower(ar.AuthservID), cfg.AuthservPatterns())}
		var parts []string
		for _, r := range ar.Results {
			switch r.Method {
			case "dkim", "spf", "dmarc":
			default:
				continue
			}
			p := r.Method + "=" + r.Result
			d := resultDomain(r)
			if d != "" {
				p += " (" + d + ")"
			}
			if r.Result == "pass" && fromDomain != "" && (d == fromDomain || strings.HasSuffix(d, "."+fromDomain) || strings.HasSuffix(fromDomain, "."+d)) {
				st.Passes = true
			}
			parts = append(parts, p)
		}
		st.Results = strings.Join(parts, " ")
		a.Stamps = append(a.Stamps, st)
	}
	if rs := hdr["Received"]; len(rs) > 0 {
		a.InboundHost = receivedBy(rs[0])
	}

	authenticated := v.Auth != nil
	switch {
	case v.Outcome == mailbot.OutcomeIgnore:
		a.Lines = append(a.Lines, "the reply was taken for automatic mail ("+v.Reason+"); reply by hand from your phone's mail app")
	case v.StoppedBy == mailbot.CheckFrom:
		a.Lines = append(a.Lines, v.Reason)
		if from != "" {
			a.Lines = append(a.Lines, fmt.Sprintf("if %s is yours, add it to owner_addresses in phone.yaml (or run agentkit phone setup --owner %s)", from, strings.Join(append(append([]string{}, cfg.OwnerAddresses...), from), ",")))
		}
	case v.StoppedBy == mailbot.CheckDuplicates:
		a.Lines = append(a.Lines, v.Reason+"; the bot cannot trust a message whose headers appear twice, so reply from another mail app")
	case v.Outcome == mailbot.OutcomeRetry:
		a.Lines = append(a.Lines, "a DKIM key could not be looked up just now ("+v.Reason+"); run agentkit phone test again in a while")
	case !authenticated:
		a.Lines = append(a.Lines, "the reply was not authenticated: "+v.Reason)
		a.Lines = append(a.Lines, a.authAdvice(cfg, v, fromDomain)...)
	default:
		a.Obeyed = true
		a.Lines = append(a.Lines, Obeyed+" ("+authSentence(v.Auth)+")")
		if v.StoppedBy == mailbot.CheckFresh {
			a.Obeyed = false
			a.Lines = []string{"the reply was authenticated, but refused as not new: " + v.Reason}
		} else if v.StoppedBy != "" {
			a.Lines = append(a.Lines, "this reply itself would get an answer, not an action ("+v.Reason+"); answer real problems with one of the words they offer")
		}
	}
	return a
}

// authAdvice says which setting would let the reply pass.
func (a Advice) authAdvice(cfg *mailbot.Config, v mailbot.Verdict, fromDomain string) []string {
	var out []string
	for _, s := range v.Signatures {
		switch {
		case s.Result == "pass" && !s.Aligned:
			out = append(out, fmt.Sprintf("your mail is signed by %s, not by %s, so its DKIM signature cannot vouch for your address", s.Domain, fromDomain))
		case s.Result == "pass" && len(s.Unsigned) > 0:
			out = append(out, fmt.Sprintf("the DKIM signature by %s does not cover %s, which the bot reads, so it cannot vouch alone", s.Domain, strings.Join(s.Unsigned, ", ")))
		}
	}
	if len(a.Stamps) == 0 {
		out = append(out, "the reply carries no Authentication-Results header, and no valid DKIM signature of "+fromDomain+"; the bot's mailbox provider does not stamp incoming mail, so replies need a DKIM signature of your address's domain (most big providers sign; check your provider's DKIM setup)")
		return out
	}
	top := a.Stamps[0]
	switch {
	case top.AuthservID == "":
		out = append(out, "the topmost Authentication-Results header names no authserv-id (Microsoft writes such headers), so it never counts")
	case !top.Trusted && top.Passes:
		out = append(out, fmt.Sprintf("your provider stamped Authentication-Results: %s; %s, but trusted_authserv_ids does not hold %s", top.AuthservID, top.Results, top.AuthservID))
		out = append(out, fmt.Sprintf("to trust it, add it to trusted_authserv_ids in phone.yaml, or run: agentkit phone setup --authserv-id %s", suggestPattern(top.AuthservID)))
	case !top.Trusted:
		out = append(out, fmt.Sprintf("your provider stamped Authentication-Results: %s; %s: nothing passed for %s", top.AuthservID, top.Results, fromDomain))
	case top.Trusted && top.Passes && a.InboundHost != "" && !matchPattern(a.InboundHost, cfg.HostPatterns()):
		out = append(out, fmt.Sprintf("the trusted header counts only above the provider's inbound Received header, and the topmost Received names %s, which trusted_hosts does not hold; add it to trusted_hosts in phone.yaml, or run: agentkit phone setup --trusted-host %s", a.InboundHost, suggestPattern(a.InboundHost)))
	case top.Trusted && !top.Passes:
		out = append(out, fmt.Sprintf("your provider (%s) found no pass for %s: %s; check that your address's domain publishes DKIM and SPF", top.AuthservID, fromDomain, top.Results))
	}
	return out
}

func authSentence(a *mailbot.Auth) string {
	if a.Path == "authres" {
		return fmt.Sprintf("%s vouched: %s=pass for %s", a.AuthservID, a.Method, a.Domain)
	}
	return "the bot verified the DKIM signature of " + a.Domain
}

// suggestPattern proposes what to trust: the exact name, or *.parent when
// the first label carries digits (providers that rotate host names), unless
// that parent would be a bare registrable domain the provider may not own.
func suggestPattern(host string) string {
	first, parent, ok := strings.Cut(host, ".")
	if !ok || strings.Count(parent, ".") < 1 || !strings.ContainsAny(first, "0123456789") {
		return host
	}
	return "*." + parent
}

func resultDomain(r mailbot.AuthResult) string {
	for _, p := range []string{"header.d", "header.from", "smtp.mailfrom", "header.i"} {
		if v := r.Prop(p); v != "" {
			return strings.ToLower(v[strings.LastIndexByte(v, '@')+1:])
		}
	}
	return ""
}

// matchPattern matches an exact name or a *.suffix pattern.
func matchPattern(name string, patterns []string) bool {
	for _, p := range patterns {
		if suffix, ok := strings.CutPrefix(p, "*"); ok {
			if strings.HasSuffix(name, suffix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}

// receivedBy returns the host after "by" in a Received header.
func receivedBy(v string) string {
	words := strings.Fields(v)
	for i := 0; i+1 < len(words); i++ {
		if strings.EqualFold(words[i], "by") {
			return strings.ToLower(strings.TrimSuffix(strings.Trim(words[i+1], "();"), "."))
		}
	}
	return ""
}

func readHeader(raw []byte) mail.Header {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return mail.Header{}
	}
	return m.Header
}
