package mailbot

import (
	"regexp"
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
}

func newWroteMarker(start string, stops []string, end string) wroteMarker {
	m := wroteMarker{
		start: regexp.MustCompile(`(?i)\A[` + blank + `<>-]*` + start + ` `),
		end:   regexp.MustCompile(`(?im)\A(?:` + end + `)[` + blank + `.:>-]*$`),
	}
	for _, s := range stops {
		m.stops = append(m.stops, regexp.MustCompile(`(?i)\A(?:`+s+`)`))
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

// matchOnDateWrote reports whether a marker starts at text[pos] (a line
// start) and where it ends (the end of its last line).
func matchOnDateWrote(text string, pos int) (int, bool) {
	// Every marker starts with a letter after optional blanks and <>-.
	for i := pos; i < len(text); i++ {
		c := text[i]
		if c == ' ' || c == '\t' || c == '<' || c == '>' || c == '-' {
			continue
		}
		if c < 0x80 && !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return 0, false
		}
		break
	}
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
		if m.stopsAt(text, p) {
			return 0, false
		}
		_, size := utf8.DecodeRuneInString(text[p:])
		p += size
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
	for _, s := range m.stops {
		loc := s.FindStringIndex(text[p:])
		if loc == nil {
			continue
		}
		first := isWordByte(text[p])
		if before == first {
			return false // no boundary before
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
