package runtimes

import (
	"regexp"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/redact"
)

// pattern maps a failure message shape to its class.
type pattern struct {
	class Class
	re    *regexp.Regexp
}

func pat(class Class, expr string) pattern {
	return pattern{class: class, re: regexp.MustCompile(`(?i)` + expr)}
}

// genericPatterns are RUNTIMES.md's failure table, tried after an adapter's own.
var genericPatterns = []pattern{
	pat(ClassUsageLimit, `\b(usage|plan|weekly|daily|session|message) limit (reached|exceeded|hit)`),
	pat(ClassUsageLimit, `limit will reset`),
	pat(ClassUsageLimit, `\byou('ve| have) (reached|used|hit) (your|the)(\s+\S+){0,4}?\s+limit`),
	pat(ClassUsageLimit, `\bout of (credits|messages)`),
	pat(ClassUsageLimit, `\bupgrade\b.{0,40}?\bto continue`),

	pat(ClassRateLimit, `\b429\b`),
	pat(ClassRateLimit, `\brate[ _-]?limit(ed|ing)?`),
	pat(ClassRateLimit, `too many requests`),
	pat(ClassRateLimit, `\bretry[- ]after`),

	pat(ClassProviderOutage, `\b50[0234]\b`),
	pat(ClassProviderOutage, `overloaded`),
	pat(ClassProviderOutage, `service unavailable`),
	pat(ClassProviderOutage, `bad gateway`),
	pat(ClassProviderOutage, `connection (reset|refused)`),

	pat(ClassAuth, `\b40[13]\b`),
	pat(ClassAuth, `unauthori[sz]ed`),
	pat(ClassAuth, `authentication (failed|error)`),
	pat(ClassAuth, `invalid api key`),
	pat(ClassAuth, `not logged in`),
	pat(ClassAuth, `please run .{0,12}login`),

	pat(ClassModelUnavailable, `model[ _-]not[ _-]found`),
	pat(ClassModelUnavailable, `invalid[ _-]model`),
	pat(ClassModelUnavailable, `unknown model`),
}

// adapterPatterns are each CLI's own messages, tried first.
var adapterPatterns = map[string][]pattern{
	"claude": {
		pat(ClassUsageLimit, `claude( ai)? usage limit reached`),
		pat(ClassUsageLimit, `your limit will reset at`),
		pat(ClassUsageLimit, `\b(5|five)[- ]hour limit`),
		pat(ClassUsageLimit, `weekly limit reached`),
		pat(ClassUsageLimit, `out of extra usage`),
		pat(ClassAuth, `please run /login`),
		pat(ClassAuth, `oauth token (has )?(expired|been revoked|revoked)`),
		pat(ClassModelUnavailable, `issue with the selected model`),
		pat(ClassModelUnavailable, `not_found_error.{0,80}\bmodel\b`),
		pat(ClassProviderOutage, `overloaded_error`),
		pat(ClassProviderOutage, `\bapi_error\b`),
	},
	"codex": {
		pat(ClassUsageLimit, `plan limit reached`),
		pat(ClassUsageLimit, `\byou('ve| have) hit your (usage|plan) limit`),
		pat(ClassUsageLimit, `quota exceeded`),
		pat(ClassUsageLimit, `usage limit. resets (in|at)`),
		pat(ClassAuth, `codex login`),
		pat(ClassAuth, `not authenticated`),
		pat(ClassAuth, `session expired`),
		pat(ClassModelUnavailable, `model is not supported`),
		pat(ClassModelUnavailable, `does not have access to (the )?model`),
	},
	"opencode": {
		pat(ClassAuth, `ProviderAuthError`),
		pat(ClassModelUnavailable, `(Provider)?ModelNotFound(Error)?`),
	},
}

// quoteReplacer normalises typographic quotes and spaces before matching.
var quoteReplacer = strings.NewReplacer(
	"\u2019", "'", "\u2018", "'", "\u02bc", "'", "\u201c", `"`, "\u201d", `"`, "\u00a0", " ", "\u202f", " ",
)

// Classify decides the failure class of a finished session from its final
// text and stderr tail (RUNTIMES.md): the runtime's own patterns first, then
// the generic ones, the first match winning; no match means success for exit
// status 0 and a crash otherwise. For the limit and outage classes it returns
// the reset time when the message gives one (zero otherwise), and it always
// returns the line that decided, with token shapes redacted.
func Classify(runtime, finalText, stderrTail string, exitCode int, now time.Time, loc *time.Location) (Class, time.Time, string) {
	return classify(runtime, finalText, stderrTail, exitCode != 0, now, loc)
}

// classify is Classify with the failure already decided by the caller (a
// CLI may report an error and still exit 0).
func classify(runtime, text, stderr string, failed bool, now time.Time, loc *time.Location) (Class, time.Time, string) {
	all := quoteReplacer.Replace(joinNonEmpty(text, stderr))
	for _, list := range [][]pattern{adapterPatterns[runtime], genericPatterns} {
		for _, p := range list {
			m := p.re.FindStringIndex(all)
			if m == nil {
				continue
			}
			line, next := lineAt(all, m[0])
			var reset time.Time
			switch p.class {
			case ClassUsageLimit, ClassRateLimit, ClassProviderOutage:
				if t, ok := ParseReset(line, now, loc); ok {
					reset = t
				} else if t, ok := ParseReset(next, now, loc); ok {
					reset = t
				}
			}
			return p.class, reset, truncate(redactShapes(line), maxMessage)
		}
	}
	if failed {
		return ClassCrash, time.Time{}, truncate(redactShapes(lastLine(all)), maxMessage)
	}
	return ClassNone, time.Time{}, ""
}

// lineAt returns the trimmed line of s holding byte i, and the line after it.
func lineAt(s string, i int) (line, next string) {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return strings.TrimSpace(s[start:]), ""
	}
	rest := s[i+end+1:]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(s[start : i+end]), strings.TrimSpace(rest)
}

// redactShapes removes token shapes (no known values) from a message.
func redactShapes(s string) string {
	var r *redact.Redactor
	return r.String(s)
}
