package mailbot

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// wroteMarker describes one language's "On <date>, <someone> wrote:" line:
// it starts with a word, runs (possibly over a few lines) to an ending word,
// and must not meet one of its stop words on the way (so "On ... On ...
// wrote:" is not one marker).
type wroteMarker struct {
	start *regexp.Regexp   // at the line start
	stops []*regexp.Regexp // tried in order at each position; the first match decides
	end   *regexp.Regexp   // the ending word and the rest of its line
	// The lower-case first letters of the stop and end words: the regular
	// expressions run only where one of them stands.
	stopFirst, endFirst map[rune]bool
}

func newWroteMarker(start string, stops []string, end string) wroteMarker {
	m := wroteMarker{
		start:     regexp.MustCompile(`(?i)\A[` + blank + `<>-]*` + start + ` `),
		end:       regexp.MustCompile(`(?im)\A(?:` + end + `)[` + blank + `.:>-]*$`),
		stopFirst: map[rune]bool{},
		endFirst:  map[rune]bool{},
	}
	for _, s := range stops {
		m.stops = append(m.stops, regexp.MustCompile(`(?i)\A(?:`+s+`)`))
		r, _ := utf8.DecodeRuneInString(s)
		m.stopFirst[unicode.ToLower(r)] = true
	}
	for _, e := range strings.Split(end, "|") {
		r, _ := utf8.DecodeRuneInString(e)
		m.endFirst[unicode.ToLower(r)] = true
	}
	return m
}

// wroteMarkers, per language.
var wroteMarkers = []wroteMarker{
	newWroteMarker(`在`, []string{`在`, `写道`}, `写道`),
	newWroteMarker(`Op`, []string{`Op`, `het\svolgende\sgeschreven`, `schreef`}, `het\svolgende\sgeschreven|schreef[^:]+`),
	newWroteMarker(`In message`, []string{`In message`, `writes`}, `writes`),
	newWroteMarker(`(?:On|At)`, []string{`On`, `wrote`, `writes`, `says`, `said`}, `wrote|writes|says|said`),
	newWroteMarker(`Le`, []string{`Le`, `nous\sa\sdit`, `a\s+écrit`}, `nous\sa\sdit|a\s+écrit`),
	newWroteMarker(`Am`, []string{`Am`, `schrieben\sSie`}, `schrieben\sSie`),
	newWroteMarker(`Am`, []string{`Am`, `geschrieben`}, `geschrieben|schrieb[^:]+`),
	newWroteMarker(`Il`, []string{`Il`, `ha\sscritto`}, `ha\sscritto`),
	newWroteMarker(`(?:Dnia|Dňa)`, []string{`Dnia`, `Dňa`, `napisał`}, `napisał(?:\(a\))?`),
	newWroteMarker(`Em`, []string{`Em`, `escreveu`}, `escreveu`),
	newWroteMarker(`El`, []string{`El`, `escribió`}, `escribió`),
}

// wroteStarts are the first words of the markers, lower-case.
var wroteStarts = map[string]bool{"在": true, "op": true, "in": true, "on": true, "at": true, "le": true,
	"am": true, "il": true, "dnia": true, "dňa": true, "em": true, "el": true}

// startsWroteMarker reports whether line starts (after blanks and <>-)
// with the first word of a marker.
func startsWroteMarker(line string) bool {
	i := 0
	for i < len(line) {
		r, size := utf8.DecodeRuneInString(line[i:])
		if r != '<' && r != '>' && r != '-' && !isBlankRune(r) {
			break
		}
		i += size
	}
	j := i
	for j < len(line) {
		r, size := utf8.DecodeRuneInString(line[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += size
		if r == '在' {
			break
		}
	}
	return j > i && wroteStarts[strings.ToLower(line[i:j])]
}

// matchOnDateWrote reports whether a marker starts at text[pos] (a line
// start) and where it ends (the end of its last line).
func matchOnDateWrote(text string, pos int) (int, bool) {
	for _, m := range wroteMarkers {
		if end, ok := m.match(text, pos); ok {
			return end, true
		}
	}
	return 0, false
}

func (m wroteMarker) match(text string, pos int) (int, bool) {
	loc := m.start.FindStringIndex(text[pos:])
	if loc == nil {
		return 0, false
	}
	p := pos + loc[1]
	for p < len(text) {
		r, size := utf8.DecodeRuneInString(text[p:])
		if m.stopFirst[unicode.ToLower(r)] && m.stopsAt(text, p) {
			return 0, false
		}
		p += size
		if p < len(text) {
			if next, _ := utf8.DecodeRuneInString(text[p:]); !m.endFirst[unicode.ToLower(next)] {
				continue
			}
		}
		if e := m.end.FindStringIndex(text[p:]); e != nil {
			return p + e[1], true
		}
	}
	return 0, false
}

// stopsAt reports whether a whole stop word starts at text[p]: a word
// boundary before it, the first stop alternative that matches, and a word
// boundary after it (ASCII word characters, as in Ruby's \b).
func (m wroteMarker) stopsAt(text string, p int) bool {
	before := p > 0 && isWordByte(text[p-1])
	if before == isWordByte(text[p]) {
		return false // no word boundary before p
	}
	for _, s := range m.stops {
		loc := s.FindStringIndex(text[p:])
		if loc == nil {
			continue
		}
		q := p + loc[1]
		last := isWordByte(text[q-1])
		after := q < len(text) && isWordByte(text[q])
		return last != after
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
