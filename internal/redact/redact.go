// Package redact removes secret values and common token shapes from text before it is logged, stored or sent.
package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every secret that a Redactor finds.
const Mask = "[REDACTED]"

// Redactor replaces known secret values and token shapes in text.
// The zero value and a nil *Redactor are valid and remove token shapes only.
type Redactor struct {
	values   []string // known secrets, longest first
	replacer *strings.Replacer
}

// New returns a Redactor for the given secret values; empty values are ignored.
// Each value is also removed in its JSON-escaped and URL-encoded forms.
func New(secretValues ...string) *Redactor {
	seen := make(map[string]bool)
	var vals []string
	add := func(v string) {
		if v == "" || seen[v] {
			return
		}
		seen[v] = true
		vals = append(vals, v)
	}
	for _, v := range secretValues {
		add(v)
		if b, err := json.Marshal(v); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		add(url.QueryEscape(v))
		add(url.PathEscape(v))
	}
	// Longest first, so that a secret containing another is replaced whole.
	sort.SliceStable(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	r := &Redactor{values: vals}
	if len(vals) > 0 {
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, Mask)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// With returns a Redactor that also removes the given values.
func (r *Redactor) With(secretValues ...string) *Redactor {
	if r == nil {
		return New(secretValues...)
	}
	return New(append(append([]string(nil), r.values...), secretValues...)...)
}

// String returns s with every known secret value and every token shape replaced by Mask.
func (r *Redactor) String(s string) string {
	if r != nil && r.replacer != nil {
		s = r.replacer.Replace(s)
	}
	return redactShapes(s)
}

// Strings redacts each element of ss in place and returns ss.
func (r *Redactor) Strings(ss []string) []string {
	for i, s := range ss {
		ss[i] = r.String(s)
	}
	return ss
}

// shape is one token pattern; group, when non-zero, is the submatch that
// holds the secret (the rest of the match, such as "Bearer ", is kept).
type shape struct {
	re    *regexp.Regexp
	group int
	skip  func(string) bool // values that are not secrets after all
}

// shapes are the token formats that are replaced wherever they appear.
var shapes = []shape{
	// PEM private keys, across lines.
	{re: regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)},
	// Anthropic, OpenAI and similar "sk-" keys.
	{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)},
	// GitHub tokens.
	{re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`)},
	{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}`)},
	// GitLab personal access tokens.
	{re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	// AWS access key ids.
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	// Google API keys.
	{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	// Slack tokens.
	{re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	// Stripe keys.
	{re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	// JSON Web Tokens.
	{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	// Authorization headers.
	{re: regexp.MustCompile(`(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{16,})`), group: 1},
	// Credentials in URLs: scheme://user:password@host.
	{re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`), group: 1},
	// KEY=value, "api_key": "value", password: value.
	// The word must end the key, so "input_tokens": 123 is not a secret.
	{re: regexp.MustCompile(`(?i)\b[A-Za-z0-9_.-]*(?:api[_-]?key|access[_-]?key|secret|token|password|passwd|passphrase|credentials?)["']?\s*[:=]\s*["']?([^\s"',;}{]{4,})`), group: 1, skip: plainValue},
}

// redactShapes replaces every token shape in s.
func redactShapes(s string) string {
	for _, sh := range shapes {
		if sh.group == 0 {
			s = sh.re.ReplaceAllLiteralString(s, Mask)
			continue
		}
		s = replaceGroup(sh, s)
	}
	return s
}

// replaceGroup replaces the secret submatch of every match of sh in s with Mask.
func replaceGroup(sh shape, s string) string {
	g := sh.group
	matches := sh.re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[2*g], m[2*g+1]
		if start < last || s[start:end] == Mask || (sh.skip != nil && sh.skip(s[start:end])) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mask)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// plainValue reports whether a value after a secret-sounding key is clearly
// not a secret: a number, a boolean, a null, or a reference to a variable.
func plainValue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "nil", "undefined", "required", "optional":
		return true
	}
	if strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") || strings.HasPrefix(v, "<") {
		return true
	}
	return strings.Trim(v, "0123456789.-_") == ""
}
