package mailbot

import (
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// normDomain lower-cases a domain, drops a trailing dot and surrounding
// angle brackets, and turns an internationalised name into its ASCII form;
// "" when it is not a usable domain.
func normDomain(d string) string {
	d = strings.TrimSpace(d)
	d = strings.TrimPrefix(d, "<")
	d = strings.TrimSuffix(d, ">")
	d = strings.TrimSuffix(d, ".")
	if d == "" {
		return ""
	}
	for i := 0; i < len(d); i++ {
		if d[i] >= 0x80 {
			a, err := idna.Lookup.ToASCII(d)
			if err != nil {
				return ""
			}
			d = a
			break
		}
	}
	d = asciiLower(d)
	if strings.ContainsAny(d, " \t@<>;,\"") {
		return ""
	}
	return d
}

// domainOf returns the domain of an address "user@dom", "@dom", "<user@dom>"
// or of a bare domain "dom", normalised.
func domainOf(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "<")
	s = strings.TrimSuffix(s, ">")
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	return normDomain(s)
}

// orgDomain returns the organisational domain (the registrable domain, one
// label below the public suffix), or the domain itself when it has none.
func orgDomain(d string) string {
	if o, err := publicsuffix.EffectiveTLDPlusOne(d); err == nil {
		return o
	}
	return d
}

// alignedRelaxed reports whether two domains share the organisational
// domain (DMARC relaxed alignment, RFC 7489 §3.1).
func alignedRelaxed(a, b string) bool {
	a, b = normDomain(a), normDomain(b)
	if a == "" || b == "" {
		return false
	}
	return a == b || orgDomain(a) == orgDomain(b)
}

// alignedStrict reports whether two domains are the same.
func alignedStrict(a, b string) bool {
	a, b = normDomain(a), normDomain(b)
	return a != "" && a == b
}

// matchHost reports whether host matches one of the patterns: an exact
// name, or "*.suffix" for any name below suffix.
func matchHost(host string, patterns []string) bool {
	host = normDomain(host)
	if host == "" {
		return false
	}
	for _, p := range patterns {
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}
