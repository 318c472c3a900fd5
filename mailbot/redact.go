package mailbot

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Log tails in emails are cut to what a phone shows well.
const (
	// MaxLogLines is the most log lines an email quotes.
	MaxLogLines = 20
	// maxLogLineRunes cuts each quoted line; the full log stays on the machine.
	maxLogLineRunes = 160
)

const redactedMark = "[redacted]"

// secretShapes match tokens by their well-known shapes. The store redacts log
// tails before it keeps them; this second pass runs on what leaves the
// machine, since an email is a copy nobody can take back.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}\b`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}\b`),
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`),
	regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`),
	regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),
}

// secretAssignments keep the name and hide the value: "password=hunter2",
// "Authorization: Bearer abc", "api_key: '...'".
var (
	authHeader   = regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic|token)\s+)\S+`)
	assignment   = regexp.MustCompile(`(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;]+)`)
	urlUserinfo  = regexp.MustCompile(`(://)[^/\s:@]+:[^/\s@]+@`)
	longOpaque   = regexp.MustCompile(`[A-Za-z0-9+/_=-]{40,}`)
	hexOnly      = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	hasDigit     = regexp.MustCompile(`[0-9]`)
	hasUpperOrSp = regexp.MustCompile(`[A-Z+/_=-]`)
)

// RedactLog removes secrets and token shapes from text that leaves the
// machine; known secret values (the phone password) are removed verbatim.
func RedactLog(text string, known ...string) string {
	for _, k := range known {
		if len(k) >= 4 {
			text = strings.ReplaceAll(text, k, redactedMark)
		}
	}
	for _, re := range secretShapes {
		text = re.ReplaceAllString(text, redactedMark)
	}
	text = authHeader.ReplaceAllString(text, "${1}"+redactedMark)
	text = assignment.ReplaceAllString(text, "${1}${2}"+redactedMark)
	text = urlUserinfo.ReplaceAllString(text, "${1}"+redactedMark+"@")
	// Long opaque runs mixing digits with letters are keys more often than
	// not; hexadecimal ones (commit hashes, digests) are kept, since they are
	// what a reader needs to find the failing commit.
	text = longOpaque.ReplaceAllStringFunc(text, func(s string) string {
		if hexOnly.MatchString(s) || !hasDigit.MatchString(s) || !hasUpperOrSp.MatchString(s) || isPathLike(s) {
			return s
		}
		return redactedMark
	})
	return text
}

// logTail returns the last MaxLogLines non-empty-ended lines of a log,
// redacted, each cut to a phone-friendly length.
func logTail(log string, known ...string) []string {
	log = strings.TrimRight(strings.ReplaceAll(log, "\r\n", "\n"), "\n")
	if strings.TrimSpace(log) == "" {
		return nil
	}
	log = RedactLog(log, known...)
	lines := strings.Split(log, "\n")
	if len(lines) > MaxLogLines {
		lines = lines[len(lines)-MaxLogLines:]
	}
	for i, l := range lines {
		l = strings.ReplaceAll(strings.TrimRight(l, " \t\r"), "\t", "    ")
		lines[i] = cutRunes(l, maxLogLineRunes)
	}
	return lines
}

// cutRunes shortens s to at most n runes, ending it with "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// isPathLike reports whether s reads as a file path (every segment short),
// not as a base64 key that happens to hold a slash.
func isPathLike(s string) bool {
	if !strings.Contains(s, "/") {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if len(seg) >= 32 {
			return false
		}
	}
	return true
}
