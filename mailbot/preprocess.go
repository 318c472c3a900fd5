package mailbot

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rewrites made before the lines of a reply are classified.
var (
	rePGPHead     = regexp.MustCompile(`(?i)\A-----BEGIN PGP SIGNED MESSAGE-----\n(?:Hash: \w+)?\s+`)
	rePGPSig      = regexp.MustCompile(`(?ms)^-----BEGIN PGP SIGNATURE-----$.+?^-----END PGP SIGNATURE-----`)
	reUnsubscribe = regexp.MustCompile(`(?im)^Unsubscribe: .+@.+(?:\n.+http:.+)?\s*\z`)
	reAliasQuote  = regexp.MustCompile(`(?m)^.*>{5} "[^"\n]+" == .+ writes:`)
	reNewlines    = regexp.MustCompile(`\n+[\s\p{Zs}]*`)
	reEnclosedA   = regexp.MustCompile(`^>>> ?(.+?) ?>>>$`)
	reEnclosedB   = regexp.MustCompile(`^>{4,}[` + blank + `]*$`)
	reEnclosedBE  = regexp.MustCompile(`^<{4,}[` + blank + `]*$`)
)

// preprocessReply normalises line endings and quote styles, drops PGP and
// list noise, and joins "On ... wrote:" markers that a client wrapped over
// a few lines.
func preprocessReply(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	// Each rewrite runs only when its literal is there (regular expressions
	// over the whole text are what a reply costs).
	if len(text) >= 14 && strings.EqualFold(text[:14], "-----BEGIN PGP") {
		text = rePGPHead.ReplaceAllString(text, "")
	}
	if strings.Contains(text, "-----BEGIN PGP SIGNATURE-----") {
		text = rePGPSig.ReplaceAllString(text, "")
	}
	if containsFold(text, "unsubscribe:") {
		text = reUnsubscribe.ReplaceAllString(text, "")
	}
	if strings.Contains(text, `>>>>> "`) {
		text = reAliasQuote.ReplaceAllString(text, "")
	}
	text = quoteEnclosed(text)
	text = normaliseQuotePrefixes(text)
	text = joinWrappedMarkers(text)
	return strings.TrimSpace(text)
}

// quoteEnclosed turns ">>> name >>> ... <<< name <<<" and ">>>> ... <<<<"
// blocks into "> " quoted lines.
func quoteEnclosed(text string) string {
	if !strings.Contains(text, ">>>") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		var end func(string) bool
		if m := reEnclosedA.FindStringSubmatch(lines[i]); m != nil {
			name := m[1]
			end = func(l string) bool {
				return l == "<<< "+name+" <<<" || l == "<<<"+name+"<<<" || l == "<<< "+name+"<<<" || l == "<<<"+name+" <<<"
			}
		} else if reEnclosedB.MatchString(lines[i]) {
			end = reEnclosedBE.MatchString
		} else {
			continue
		}
		for j := i + 2; j < len(lines); j++ {
			if end(lines[j]) {
				quoted := make([]string, 0, j-i-1)
				for _, l := range lines[i+1 : j] {
					quoted = append(quoted, "> "+l)
				}
				lines = append(append(append([]string{}, lines[:i]...), quoted...), lines[j+1:]...)
				i += len(quoted) - 1
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// joinWrappedMarkers puts "On ... wrote:"-style markers that a client
// wrapped over up to five lines back on one line. Each kind of marker is
// looked for in a window of five lines from each line that could start it.
func joinWrappedMarkers(text string) string {
	text = joinMatches(text, startsWroteMarker, func(w string) (int, int, bool) {
		end, ok := matchOnDateWrote(w, 0)
		return 0, end, ok
	})
	for _, re := range reSomeoneWroteOnDate {
		if strings.Contains(text, re.word) {
			text = joinMatches(text, re.candidate, re.find)
		}
	}
	for _, re := range reDateSomeoneWrote {
		if strings.Contains(text, re.word) {
			text = joinMatches(text, hasFourDigits, re.find)
		}
	}
	if strings.IndexByte(text, '@') >= 0 {
		text = joinMatches(text, hasFourDigits, func(w string) (int, int, bool) {
			if !strings.Contains(w, "@") || !strings.Contains(w, "<") || !hasLineEndingInAngle(w) {
				return 0, 0, false
			}
			if loc := reDateSomeoneEmail.FindStringIndex(w); loc != nil {
				return loc[0], loc[1], true
			}
			return 0, 0, false
		})
	}
	return text
}

// joinLines is how many lines a wrapped marker may span.
const joinLines = 5

// joinMatches scans text line by line; where candidate(line) holds, find
// looks for a match starting in that line within a window of joinLines
// lines, and a match spanning at most four line breaks is joined into one
// line.
func joinMatches(text string, candidate func(line string) bool, find func(window string) (start, end int, ok bool)) string {
	var b strings.Builder
	pos := 0
	for pos < len(text) {
		lineEnd := strings.IndexByte(text[pos:], '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += pos
		}
		if candidate(text[pos:lineEnd]) {
			wEnd := lineEnd
			for n := 1; n < joinLines && wEnd < len(text); n++ {
				next := strings.IndexByte(text[wEnd+1:], '\n')
				if next < 0 {
					wEnd = len(text)
					break
				}
				wEnd += 1 + next
			}
			w := text[pos:wEnd]
			if start, end, ok := find(w); ok && start <= lineEnd-pos && end > start {
				b.WriteString(w[:start])
				m := w[start:end]
				if strings.Count(m, "\n") <= 4 {
					m = reNewlines.ReplaceAllString(m, " ")
				}
				b.WriteString(m)
				pos += end
				continue
			}
		}
		if lineEnd < len(text) {
			lineEnd++
		}
		b.WriteString(text[pos:lineEnd])
		pos = lineEnd
	}
	return b.String()
}

// hasLineEndingInAngle reports whether a line of w holds "@" and ends with
// ">" or ">:", as a "<date> <name> <address>:" marker does.
func hasLineEndingInAngle(w string) bool {
	for w != "" {
		l := w
		if i := strings.IndexByte(w, '\n'); i >= 0 {
			l, w = w[:i], w[i+1:]
		} else {
			w = ""
		}
		if (strings.HasSuffix(l, ">") || strings.HasSuffix(l, ">:")) && strings.IndexByte(l, '@') >= 0 {
			return true
		}
	}
	return false
}

func hasFourDigits(line string) bool {
	run := 0
	for i := 0; i < len(line); i++ {
		if line[i] >= '0' && line[i] <= '9' {
			if run++; run == 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// normaliseQuotePrefixes turns quote prefixes like "foo> " and "| " into
// ">" ("foo> bar" is a quote written by some Usenet-era clients).
func normaliseQuotePrefixes(text string) string {
	if strings.IndexByte(text, '>') < 0 && strings.IndexByte(text, '|') < 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		end := quotePrefixEnd(l)
		if end == 0 {
			continue
		}
		prefix := l[:end]
		if !strings.ContainsRune(prefix, '|') && !hasLetterBeforeMark(prefix) {
			continue
		}
		var b strings.Builder
		for _, seg := range splitAfterMarks(prefix) {
			// seg is blanks, letters, then the mark.
			mark := seg[len(seg)-1]
			body := strings.TrimRightFunc(seg[:len(seg)-1], isLetterOrMark)
			if mark == '>' && len(body) < len(seg)-1 {
				b.WriteString(body + ">") // letters> becomes >
			} else if mark == '|' {
				b.WriteString(seg[:len(seg)-1] + ">")
			} else {
				b.WriteString(seg)
			}
		}
		lines[i] = b.String() + l[end:]
	}
	return strings.Join(lines, "\n")
}

// quotePrefixEnd returns the end of a run of ([blank]*[letters]*[>|])+ at
// the start of l, or 0.
func quotePrefixEnd(l string) int {
	end, i := 0, 0
	for i < len(l) {
		j := i
		for j < len(l) {
			r, size := utf8.DecodeRuneInString(l[j:])
			if !isBlankRune(r) {
				break
			}
			j += size
		}
		for j < len(l) {
			r, size := utf8.DecodeRuneInString(l[j:])
			if !isLetterOrMark(r) {
				break
			}
			j += size
		}
		if j < len(l) && (l[j] == '>' || l[j] == '|') {
			i, end = j+1, j+1
			continue
		}
		break
	}
	return end
}

func hasLetterBeforeMark(prefix string) bool {
	for i, r := range prefix {
		if r == '>' && i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(prefix[:i])
			if isLetterOrMark(prev) {
				return true
			}
		}
	}
	return false
}

// splitAfterMarks splits a quote prefix after each > or |.
func splitAfterMarks(prefix string) []string {
	var out []string
	start := 0
	for i := 0; i < len(prefix); i++ {
		if prefix[i] == '>' || prefix[i] == '|' {
			out = append(out, prefix[start:i+1])
			start = i + 1
		}
	}
	return out
}

func isLetterOrMark(r rune) bool { return unicode.IsLetter(r) || unicode.IsMark(r) }

func isBlankRune(r rune) bool { return r == '\t' || unicode.Is(unicode.Zs, r) }

// containsFold reports whether s contains the lower-case ASCII word, in
// any ASCII case, without copying s.
func containsFold(s, lowerWord string) bool {
	n := len(lowerWord)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerWord[j] {
				break
			}
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}
