package mailbot

import (
	"fmt"
	"strings"
)

// receivedHop is what a Received header says: which host handed the message
// over (from) and which took it (by).
type receivedHop struct {
	from, by string
}

// parseReceived reads the from and by hosts of a Received header value;
// comments (which repeat names and addresses) are ignored.
func parseReceived(v string) receivedHop {
	if i := strings.LastIndexByte(v, ';'); i >= 0 {
		v = v[:i] // the date
	}
	words := strings.Fields(stripComments(v))
	var hop receivedHop
	for i := 0; i+1 < len(words); i++ {
		switch strings.ToLower(words[i]) {
		case "from":
			if hop.from == "" && hop.by == "" {
				hop.from = strings.ToLower(strings.TrimSuffix(words[i+1], "."))
			}
		case "by":
			if hop.by == "" {
				hop.by = strings.ToLower(strings.TrimSuffix(words[i+1], "."))
			}
		}
	}
	return hop
}

// inboundReceived returns the index (in field order, top first) of the
// provider's inbound Received header: the topmost one whose by names a
// trusted host and whose from names a host outside it; -1 when none.
func inboundReceived(fields []headerField, trustedHosts []string) (int, receivedHop) {
	if len(trustedHosts) == 0 {
		return -1, receivedHop{}
	}
	for i, f := range fields {
		if f.key != "Received" {
			continue
		}
		hop := parseReceived(f.value)
		if hop.by != "" && hop.from != "" && matchHost(hop.by, trustedHosts) && !matchHost(hop.from, trustedHosts) {
			return i, hop
		}
	}
	return -1, receivedHop{}
}

// providerResult is what the receiving provider's trusted
// Authentication-Results say about the From domain.
type providerResult struct {
	pass       bool
	method     string // dkim, spf or dmarc: the result that passed
	domain     string // the aligned domain that passed
	authservID string // the trusted authserv-id whose header passed
	headerB    string // header.b of the passing dkim result, if given
	reason     string // what a human reads, pass or fail
}

// resultIsPass is the only result that authenticates.
func resultIsPass(r string) bool { return r == "pass" }

// checkProvider applies the Authentication-Results rule: only headers with a
// trusted authserv-id standing above the provider's inbound Received header
// count; ARC-Authentication-Results and headers without an authserv-id never
// do; among the counted results about the From domain the worst wins; dkim
// needs header.d (or header.i's domain) aligned relaxed, spf needs
// smtp.mailfrom's domain equal to the From domain, dmarc needs header.from
// equal to it; spf and dmarc count only when accept_spf_only is on (a DMARC
// pass may rest on SPF alone).
func checkProvider(fields []headerField, cfg *Config, fromDomain string) providerResult {
	ids := cfg.AuthservPatterns()
	if len(ids) == 0 {
		return providerResult{reason: "no trusted_authserv_ids in phone.yaml, so the provider's Authentication-Results are not read; add your provider's (agentkit phone setup suggests them)"}
	}
	inbound, hop := inboundReceived(fields, cfg.HostPatterns())
	if inbound < 0 {
		return providerResult{reason: fmt.Sprintf("no Received header shows a trusted host (%s) taking the message from outside, so it was delivered internally or appended over IMAP and its Authentication-Results cannot be trusted; set trusted_hosts if your provider's receiving hosts have other names", strings.Join(cfg.HostPatterns(), ", "))}
	}

	var notes []string
	type counted struct {
		id string
		r  AuthResult
	}
	var results []counted
	for i, f := range fields {
		if f.key != "Authentication-Results" {
			continue
		}
		ar, err := ParseAuthResults(f.value)
		switch {
		case err != nil:
			notes = append(notes, "an unreadable Authentication-Results header")
		case ar.AuthservID == "":
			notes = append(notes, "a header without authserv-id (never counts)")
		case !matchHost(ar.AuthservID, ids):
			notes = append(notes, fmt.Sprintf("authserv-id %s (not trusted)", ar.AuthservID))
		case i > inbound:
			notes = append(notes, fmt.Sprintf("authserv-id %s below the inbound Received from %s (written before the provider got it; never counts)", ar.AuthservID, hop.from))
		default:
			for _, r := range ar.Results {
				results = append(results, counted{ar.AuthservID, r})
			}
		}
	}
	if len(results) == 0 {
		reason := fmt.Sprintf("no Authentication-Results from a trusted authserv-id above the provider's Received header (by %s from %s)", hop.by, hop.from)
		if len(notes) > 0 {
			reason += "; seen: " + strings.Join(notes, ", ")
		}
		return providerResult{reason: reason}
	}

	var (
		dkimPass, spfPass, dmarcPass     *counted
		dkimWorst, spfWorst, dmarcWorst  *counted
		unalignedDKIM, unalignedSPF, bad []string
	)
	for i := range results {
		c := &results[i]
		r := c.r
		switch r.Method {
		case "dkim":
			d := normDomain(r.Prop("header.d"))
			if d == "" {
				d = domainOf(r.Prop("header.i"))
			}
			switch {
			case d == "" && !resultIsPass(r.Result) && r.Result != "none":
				// A failure that names no domain may be about the owner's
				// signature: the worst wins.
				dkimWorst = c
				bad = append(bad, fmt.Sprintf("dkim=%s without a domain from %s", r.Result, c.id))
			case d == "":
			case !alignedRelaxed(d, fromDomain):
				unalignedDKIM = append(unalignedDKIM, "dkim="+r.Result+" for "+d)
			case resultIsPass(r.Result):
				if dkimPass == nil {
					dkimPass = c
				}
			default:
				dkimWorst = c
				bad = append(bad, fmt.Sprintf("dkim=%s for %s from %s", r.Result, d, c.id))
			}
		case "spf":
			d := domainOf(r.Prop("smtp.mailfrom"))
			switch {
			case d == "":
			case d != normDomain(fromDomain):
				unalignedSPF = append(unalignedSPF, "spf="+r.Result+" for "+d)
			case resultIsPass(r.Result):
				if spfPass == nil {
					spfPass = c
				}
			default:
				spfWorst = c
				bad = append(bad, fmt.Sprintf("spf=%s for %s from %s", r.Result, d, c.id))
			}
		case "dmarc":
			d := domainOf(r.Prop("header.from"))
			switch {
			case d == "" || d != normDomain(fromDomain):
			case resultIsPass(r.Result):
				if dmarcPass == nil {
					dmarcPass = c
				}
			case r.Result == "none":
			default:
				dmarcWorst = c
				bad = append(bad, fmt.Sprintf("dmarc=%s for %s from %s", r.Result, d, c.id))
			}
		}
	}

	if dmarcWorst != nil {
		return providerResult{reason: "the provider's trusted headers say " + strings.Join(bad, ", ") + "; a DMARC failure refuses the message whatever else passed"}
	}
	if dkimPass != nil && dkimWorst == nil {
		return providerResult{pass: true, method: "dkim", domain: domainOrI(dkimPass.r),
			authservID: dkimPass.id, headerB: dkimPass.r.Prop("header.b"),
			reason: fmt.Sprintf("provider %s says dkim=pass for %s, aligned with %s", dkimPass.id, domainOrI(dkimPass.r), fromDomain)}
	}
	spfOK := spfPass != nil && spfWorst == nil
	dmarcOK := dmarcPass != nil
	if spfOK || dmarcOK {
		method, c := "spf", spfPass
		if !spfOK {
			method, c = "dmarc", dmarcPass
		}
		if cfg.AcceptSPFOnly {
			return providerResult{pass: true, method: method, domain: normDomain(fromDomain), authservID: c.id,
				reason: fmt.Sprintf("provider %s says %s=pass for %s (no aligned DKIM pass; accepted because accept_spf_only is on)", c.id, method, fromDomain)}
		}
		reason := fmt.Sprintf("provider %s says only %s=pass for %s and accept_spf_only is false in phone.yaml; turn it on, or reply from a client that signs with DKIM", c.id, method, fromDomain)
		if len(bad) > 0 {
			reason += "; also " + strings.Join(bad, ", ")
		}
		return providerResult{reason: reason}
	}
	var why []string
	if len(bad) > 0 {
		why = append(why, strings.Join(bad, ", "))
	}
	if dkimPass != nil && dkimWorst != nil {
		why = append(why, "trusted headers disagree about DKIM, and the worst result wins")
	}
	if len(unalignedDKIM) > 0 {
		why = append(why, "not aligned with "+fromDomain+": "+strings.Join(unalignedDKIM, ", "))
	}
	if len(unalignedSPF) > 0 {
		why = append(why, "envelope sender not "+fromDomain+": "+strings.Join(unalignedSPF, ", "))
	}
	if len(why) == 0 {
		why = append(why, "no dkim, spf or dmarc result about "+fromDomain)
	}
	return providerResult{reason: "the provider's trusted headers do not pass " + fromDomain + ": " + strings.Join(why, "; ")}
}

func domainOrI(r AuthResult) string {
	if d := normDomain(r.Prop("header.d")); d != "" {
		return d
	}
	return domainOf(r.Prop("header.i"))
}
