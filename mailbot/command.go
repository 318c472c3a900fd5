package mailbot

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Verb is a reply's command word.
type Verb string

// The verbs a reply may start with.
const (
	VerbRetry   Verb = "retry"
	VerbAccept  Verb = "accept"
	VerbSkip    Verb = "skip"
	VerbDismiss Verb = "dismiss"
	VerbHint    Verb = "hint"
	VerbPlan    Verb = "plan"
	VerbStatus  Verb = "status"
	VerbPause   Verb = "pause"
	VerbResume  Verb = "resume"
	VerbHelp    Verb = "help"
)

var verbs = map[string]Verb{
	"retry": VerbRetry, "accept": VerbAccept, "skip": VerbSkip, "dismiss": VerbDismiss,
	"hint": VerbHint, "plan": VerbPlan, "status": VerbStatus, "pause": VerbPause,
	"resume": VerbResume, "help": VerbHelp,
}

// NeedsCode reports whether the verb answers a problem (and so needs its code).
func (v Verb) NeedsCode() bool {
	switch v {
	case VerbRetry, VerbAccept, VerbSkip, VerbDismiss, VerbHint, VerbPlan:
		return true
	}
	return false
}

// NeedsWords reports whether the verb must be followed by words.
func (v Verb) NeedsWords() bool { return v == VerbHint || v == VerbPlan }

// CodeAlphabet is the letters of a problem code: no vowels, no Y, no L.
const CodeAlphabet = "BCDFGHJKMNPQRSTVWXZ"

// CodeLength is the number of letters in a problem code.
const CodeLength = 6

// Where a code was found.
const (
	CodeFromText    = "text"
	CodeFromSubject = "subject"
	CodeFromThread  = "thread"
)

// Command is what a reply asks for: a verb, its words (a hint or plan's text,
// or the repository of pause/resume) and the problem code.
type Command struct {
	Verb Verb `json:"verb"`
	// Words are a hint's or plan's text; for pause and resume, the
	// repository's short name (empty for all).
	Words string `json:"words,omitempty"`
	// Code is the problem code, upper-case; empty for verbs that need none.
	Code string `json:"code,omitempty"`
	// CodeFrom says where the code was read: text, subject or thread.
	CodeFrom string `json:"code_from,omitempty"`
	// FromSubject is true when the new text was empty and the subject was
	// read as the command.
	FromSubject bool `json:"from_subject,omitempty"`
}

// ParseCode returns s as a problem code when it is one (case-insensitive).
func ParseCode(s string) (string, bool) {
	if len(s) != CodeLength {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
			b[i] = c
		}
		if strings.IndexByte(CodeAlphabet, c) < 0 {
			return "", false
		}
	}
	return string(b), true
}

// FindCodes returns the distinct problem codes standing as whole words in s
// (upper-case, in order of appearance).
func FindCodes(s string) []string {
	var out []string
	for _, w := range words(s) {
		if c, ok := ParseCode(w); ok && !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// words splits s into runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// CommandError says why a reply holds no usable command, in words for the
// answer the owner gets.
type CommandError struct{ Msg string }

func (e *CommandError) Error() string { return e.Msg }

func cmdErr(format string, args ...any) error {
	return &CommandError{Msg: fmt.Sprintf(format, args...)}
}

// ParseCommand reads the command at the start of text: a verb (any case,
// optionally followed by ":", "-", "," or "."), then for hint and plan the
// words, for pause and resume an optional repository name. A code standing
// before the verb is skipped ("BCDFGH retry"); for hint and plan a code
// right after the verb is not part of the words. The returned Command has
// no code: see FindCodes and ResolveCode.
func ParseCommand(text string) (Command, error) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return Command{}, cmdErr("the reply is empty; write one of: %s", verbList)
	}
	rest := text
	word, after := firstWord(rest)
	if _, ok := ParseCode(word); ok {
		rest = after
		word, after = firstWord(rest)
	}
	v, ok := verbs[strings.ToLower(word)]
	if !ok {
		shown := word
		if shown == "" {
			shown, _, _ = strings.Cut(rest, "\n")
		}
		if utf8.RuneCountInString(shown) > 40 {
			shown = string([]rune(shown)[:40]) + "..."
		}
		return Command{}, cmdErr("the reply starts with %q, which is not a command; write one of: %s", shown, verbList)
	}
	cmd := Command{Verb: v}
	after = trimSeparator(after)
	switch {
	case v.NeedsWords():
		w, a := firstWord(after)
		if _, ok := ParseCode(w); ok {
			after = trimSeparator(a)
		}
		cmd.Words = strings.TrimSpace(after)
		if cmd.Words == "" {
			return Command{}, cmdErr("%s needs words after it, like: %s use the v2 API", v, v)
		}
	case v == VerbPause || v == VerbResume:
		line, _, _ := strings.Cut(after, "\n")
		repo := repoToken(line)
		if _, isCode := ParseCode(repo); isCode && strings.ToUpper(repo) == repo {
			repo = "" // "pause BCDFGH" from a thread-style subject: not a repository
		}
		if repo != "" && !isRepoName(repo) {
			return Command{}, cmdErr("%q is not a repository name; write %s, or %s followed by the repository's short name", repo, v, v)
		}
		cmd.Words = repo
	}
	return cmd, nil
}

var verbList = "retry, accept, skip, dismiss, hint <words>, plan <words>, status, pause [repo], resume [repo], help"

// firstWord splits off the first run of letters and digits (a verb or a
// code), after leading space; rest starts right after it.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	end := 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		end += size
	}
	return s[:end], s[end:]
}

// repoToken returns the first space-separated token of line without
// trailing punctuation ("pause web-app." names web-app).
func repoToken(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(f[0], ".,!;:")
}

// trimSeparator drops what may stand between a verb and its words:
// space, and one of ":", "-", ",", "." or "!" (as in "hint: use the v2 API").
func trimSeparator(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	for len(s) > 0 && strings.IndexByte(":-,.!;–—", s[0]) >= 0 {
		s = strings.TrimLeftFunc(s[1:], unicode.IsSpace)
	}
	if strings.HasPrefix(s, "–") || strings.HasPrefix(s, "—") {
		s = strings.TrimLeftFunc(s[len("–"):], unicode.IsSpace)
	}
	return s
}

func isRepoName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// subjectPrefixes are reply and forward markers in several languages.
var subjectPrefixes = []string{"re", "fwd", "fw", "aw", "sv", "vs", "wg", "antw", "antwort", "tr", "rif", "res", "odp", "ref", "réf", "r", "enc", "ynt", "回复", "答复", "转发", "回覆", "轉寄"}

// SubjectTag marks the bot's subjects.
const SubjectTag = "[agentkit]"

// CleanSubject removes Re:/Fwd:/AW:/SV:-style prefixes (also "Re[2]:" and
// "RE :") and the [agentkit] tag, and reports whether the tag was there.
func CleanSubject(s string) (string, bool) {
	s = strings.TrimSpace(s)
	tagged := false
	for {
		changed := false
		if len(s) >= len(SubjectTag) && strings.EqualFold(s[:len(SubjectTag)], SubjectTag) {
			s, tagged, changed = strings.TrimSpace(s[len(SubjectTag):]), true, true
		}
		if rest, ok := cutSubjectPrefix(s); ok {
			s, changed = rest, true
		}
		if !changed {
			return s, tagged
		}
	}
}

func cutSubjectPrefix(s string) (string, bool) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) {
			break
		}
		i += size
	}
	if i == 0 || !contains(subjectPrefixes, strings.ToLower(s[:i])) {
		return s, false
	}
	j := i
	// Re[2]: or Re(2):
	if j < len(s) && (s[j] == '[' || s[j] == '(') {
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j+1 && k < len(s) && (s[k] == ']' || s[k] == ')') {
			j = k + 1
		}
	}
	for j < len(s) && s[j] == ' ' {
		j++
	}
	switch {
	case strings.HasPrefix(s[j:], ":"):
		j++
	case strings.HasPrefix(s[j:], "："):
		j += len("：")
	default:
		return s, false
	}
	return strings.TrimSpace(s[j:]), true
}

// subjectCodes returns the codes a subject names: in a bot subject
// ("[agentkit] CODE repo: summary") only the word after the tag, so a
// repository or summary word shaped like a code is not mistaken for one;
// in a subject the owner wrote, every code-shaped word.
func subjectCodes(subject string) []string {
	clean, tagged := CleanSubject(subject)
	if !tagged {
		if i := strings.Index(strings.ToLower(clean), SubjectTag); i >= 0 {
			clean, tagged = strings.TrimSpace(clean[i+len(SubjectTag):]), true
		}
	}
	if tagged {
		w, _ := firstWord(clean)
		if c, ok := ParseCode(w); ok {
			return []string{c}
		}
		return nil
	}
	return FindCodes(clean)
}
