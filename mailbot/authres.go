package mailbot

import (
	"errors"
	"strings"
)

// AuthResults is one Authentication-Results header field (RFC 8601), read
// tolerantly: comments are removed first (so "(2048-bit key; unprotected)"
// or "(client-ip=...; helo=...)" cannot split a result), and results that do
// not follow the grammar exactly are still read where their meaning is clear.
type AuthResults struct {
	// AuthservID names the host that wrote the header; "" when the header
	// has none (Microsoft writes such headers), and then it never counts.
	AuthservID string `json:"authserv_id,omitempty"`
	// Version is the optional version after the authserv-id.
	Version string       `json:"version,omitempty"`
	Results []AuthResult `json:"results,omitempty"`
}

// AuthResult is one method's result, like dkim=pass header.d=example.com.
type AuthResult struct {
	// Method is lower-case, without a version: dkim, spf, dmarc, arc, iprev...
	Method string `json:"method"`
	// Result is lower-case: pass, fail, softfail, neutral, none, temperror,
	// permerror, policy (and what real servers write besides, like unknown).
	Result string `json:"result"`
	// Reason is the reason= value, if any.
	Reason string `json:"reason,omitempty"`
	// Props holds the properties by lower-case name ("header.d",
	// "header.i", "header.b", "header.from", "smtp.mailfrom"...), unquoted;
	// the first of a repeated name is kept.
	Props map[string]string `json:"props,omitempty"`
}

// Prop returns a property's value, or "".
func (r AuthResult) Prop(name string) string { return r.Props[name] }

// ErrEmptyAuthResults is returned for a header with nothing to read.
var ErrEmptyAuthResults = errors.New("mailbot: empty Authentication-Results header")

// knownMethods start a new result even where a writer forgot the semicolon.
var knownMethods = map[string]bool{
	"auth": true, "dkim": true, "domainkeys": true, "sender-id": true,
	"spf": true, "iprev": true, "dmarc": true, "arc": true, "bimi": true,
	"dkim-atps": true, "dkim-adsp": true, "vbr": true, "rrvs": true,
	"smime": true, "dnswl": true,
}

// ParseAuthResults reads the value of one Authentication-Results header
// field (unfolded or not). It fails only when the value holds nothing at all.
func ParseAuthResults(value string) (AuthResults, error) {
	clean := stripComments(value)
	segs := splitOutsideQuotes(clean, ';')
	var ar AuthResults
	if len(segs) == 0 || strings.TrimSpace(clean) == "" {
		return ar, ErrEmptyAuthResults
	}
	first := strings.TrimSpace(segs[0])
	rest := segs[1:]
	if strings.Contains(first, "=") {
		// No authserv-id: the first segment is already a result.
		rest = segs
	} else if first != "" {
		fields := strings.Fields(first)
		ar.AuthservID = strings.ToLower(unquote(fields[0]))
		if strings.ContainsAny(ar.AuthservID, " \t\r\n;\"()") {
			ar.AuthservID = "" // not a name: never trusted
		}
		if len(fields) > 1 {
			ar.Version = fields[1]
		}
	}
	for _, seg := range rest {
		ar.Results = append(ar.Results, parseResinfo(seg)...)
	}
	if ar.AuthservID == "" && len(ar.Results) == 0 {
		return ar, ErrEmptyAuthResults
	}
	return ar, nil
}

// parseResinfo reads one ";"-separated segment: method=result, then
// reason= and properties. A known method name met again starts a new
// result (a writer forgot a semicolon). A bare word like "none" yields
// nothing.
func parseResinfo(seg string) []AuthResult {
	var out []AuthResult
	var cur *AuthResult
	for _, kv := range tokenizePairs(seg) {
		key := strings.ToLower(kv.key)
		if !kv.hasValue || !isResKey(key) {
			continue // "none", or junk
		}
		method, _, _ := strings.Cut(key, "/") // "dkim/1" carries a version
		if cur == nil || (!strings.Contains(key, ".") && knownMethods[method] && key != "reason") {
			result := strings.ToLower(strings.TrimSpace(kv.value))
			if result == "" || strings.ContainsAny(result, " \t\r\n;=\"") {
				continue // a result is a keyword; this is junk
			}
			out = append(out, AuthResult{Method: method, Result: result})
			cur = &out[len(out)-1]
			continue
		}
		if key == "reason" {
			if cur.Reason == "" {
				cur.Reason = kv.value
			}
			continue
		}
		if cur.Props == nil {
			cur.Props = make(map[string]string, 4)
		}
		if _, dup := cur.Props[key]; !dup {
			cur.Props[key] = kv.value
		}
	}
	return out
}

type pair struct {
	key, value string
	hasValue   bool
}

// tokenizePairs splits "a=b c = "d e" f" into pairs, values unquoted.
func tokenizePairs(s string) []pair {
	var out []pair
	i := 0
	n := len(s)
	for i < n {
		for i < n && isWSP(s[i]) {
			i++
		}
		if i >= n {
			break
		}
		start := i
		for i < n && !isWSP(s[i]) && s[i] != '=' {
			if s[i] == '"' { // a quoted word where a key should be: skip it
				_, i = readQuoted(s, i)
				continue
			}
			i++
		}
		key := s[start:i]
		j := i
		for j < n && isWSP(s[j]) {
			j++
		}
		if j >= n || s[j] != '=' {
			out = append(out, pair{key: key})
			i = j
			continue
		}
		j++ // '='
		for j < n && isWSP(s[j]) {
			j++
		}
		var val string
		if j < n && s[j] == '"' {
			val, j = readQuoted(s, j)
		} else {
			vs := j
			for j < n && !isWSP(s[j]) {
				j++
			}
			val = s[vs:j]
		}
		i = j
		if key == "" {
			continue
		}
		out = append(out, pair{key: key, value: val, hasValue: true})
	}
	return out
}

// readQuoted reads a quoted string starting at s[i] == '"' and returns its
// content (escapes resolved) and the index after the closing quote.
func readQuoted(s string, i int) (string, int) {
	var b strings.Builder
	i++
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i += 2
			continue
		case c == '"':
			return b.String(), i + 1
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), i
}

func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		v, _ := readQuoted(s, 0)
		return v
	}
	return s
}

func isWSP(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stripComments replaces every RFC 5322 comment (nested, with quoted-pairs)
// by a space, leaving quoted strings (which may hold parentheses) alone. An
// unclosed comment runs to the end.
func stripComments(s string) string {
	if strings.IndexByte(s, '(') < 0 && strings.IndexByte(s, '\n') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	depth := 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth > 0:
			switch c {
			case '\\':
				i++
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					b.WriteByte(' ')
				}
			}
		case inQuote:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			} else if c == '"' {
				inQuote = false
			}
		case c == '"':
			inQuote = true
			b.WriteByte(c)
		case c == '(':
			depth = 1
		case c == ')':
			b.WriteByte(' ') // stray
		case c == '\r' || c == '\n':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitOutsideQuotes splits s at sep where sep is not inside a quoted string.
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	inQuote := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// isResKey reports whether k can name a method or property: letters,
// digits, ".", "-", "_" and "/" (a method version).
func isResKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '/') {
			return false
		}
	}
	return k != ""
}
