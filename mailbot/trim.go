package mailbot

import (
	"regexp"
	"strconv"
	"strings"
)

// TrimReply returns the text a person wrote in a reply: the quoted
// original ("On ... wrote:", "-----Original Message-----", Outlook's
// From:/Sent: block, "> " lines), everything after a delimiter line ("-- ",
// "________________"), and "Sent from my iPhone"-style lines are removed;
// a reply written below the quote is found too.
//
// It classifies each line (empty, delimiter, signature, embedded-message
// marker, header, quote, text) and cuts by the sequence of classes, the
// approach of discourse/email_reply_trimmer (MIT), whose 64 fixtures are in
// testdata/email_reply_trimmer and must all pass.
func TrimReply(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	text = preprocessReply(text)
	text, blocks := hoistCodeBlocks(text)

	lines := strings.Split(text, "\n")
	kinds := make([]byte, len(lines))
	for i, l := range lines {
		kinds[i] = classifyLine(l)
	}
	p := &linePattern{lines: lines, kinds: kinds}

	// Everything after the first delimiter goes.
	if i := p.index(reDelim); i >= 0 {
		p.keep(0, i)
	}
	// Mobile signatures go wherever they are.
	p.removeAll(kindSignature)

	// A reply below the quoted original.
	if reReplyAtEnd.MatchString(p.str()) {
		i := p.index(reTextTail)
		return restoreCodeBlocks(strings.TrimSpace(strings.Join(p.lines[i:], "\n")), blocks)
	}
	// An embedded-message marker after the text, not followed by a quote:
	// keep the text up to it.
	if i := p.index(reTextThenMarker); i >= 0 {
		p.keep(0, i+1)
	}
	// An embedded marker followed by a long quote, then at most a few text
	// lines: keep the text before it.
	if m := reTextMarkerQuote.FindStringSubmatchIndex(p.str()); m != nil && strings.Count(p.str()[m[2]:m[3]], "t") < 7 {
		p.keep(0, m[0]+1)
	}
	// Text followed by a quote that ends the message: drop the quote.
	if i := p.index(reQuoteAtEnd); i >= 0 {
		p.keep(0, i+1)
	}
	p.removeAll(kindEmbedded)

	// Headers spread over several lines (a wrapped To: list) become one block.
	if m := reHeaderBlock.FindStringIndex(p.str()); m != nil {
		for i := m[0]; i < m[1]; i++ {
			p.kinds[i] = kindHeader
		}
	}
	// Three or more header lines after text start a quoted message.
	if i := p.index(reTextThenHeaders); i >= 0 {
		p.keep(0, i+1)
	}
	p.removeAll(kindHeader)

	// Trailing quotes and blank lines after some text.
	if strings.IndexByte(p.str(), kindText) >= 0 {
		if i := p.index(reTrailingQuotes); i >= 0 {
			p.keep(0, i)
		}
	}

	return restoreCodeBlocks(strings.TrimSpace(strings.Join(p.lines, "\n")), blocks)
}

func restoreCodeBlocks(out string, cb *codeBlocks) string {
	if cb == nil {
		return out
	}
	for i, b := range cb.blocks {
		out = strings.Replace(out, cb.token(i), b, 1)
	}
	return out
}

// Line classes.
const (
	kindEmpty     = 'e'
	kindDelimiter = 'd'
	kindSignature = 's'
	kindEmbedded  = 'b'
	kindHeader    = 'h'
	kindQuote     = 'q'
	kindText      = 't'
)

// Rules over the string of line classes.
var (
	reDelim           = regexp.MustCompile(`d`)
	reReplyAtEnd      = regexp.MustCompile(`^b[^t]+t[et]*$`)
	reTextTail        = regexp.MustCompile(`t[et]*$`)
	reTextThenMarker  = regexp.MustCompile(`te*b[^q]*$`)
	reTextMarkerQuote = regexp.MustCompile(`te*b[eqbh]*([te]*)$`)
	reQuoteAtEnd      = regexp.MustCompile(`t?e*[qbe]+$`)
	reHeaderBlock     = regexp.MustCompile(`h+[hte]+h+e`)
	reTextThenHeaders = regexp.MustCompile(`t[eq]*h{3,}`)
	reTrailingQuotes  = regexp.MustCompile(`[eq]+$`)
)

// linePattern keeps lines and their classes in step.
type linePattern struct {
	lines []string
	kinds []byte
}

func (p *linePattern) str() string { return string(p.kinds) }

func (p *linePattern) index(re *regexp.Regexp) int {
	if m := re.FindStringIndex(p.str()); m != nil {
		return m[0]
	}
	return -1
}

func (p *linePattern) keep(from, to int) {
	p.lines, p.kinds = p.lines[from:to], p.kinds[from:to]
}

func (p *linePattern) removeAll(kind byte) {
	lines, kinds := p.lines[:0], p.kinds[:0]
	for i, k := range p.kinds {
		if k != kind {
			lines, kinds = append(lines, p.lines[i]), append(kinds, k)
		}
	}
	p.lines, p.kinds = lines, kinds
}

// hoistCodeBlocks replaces ``` fenced blocks by tokens, so their lines are
// not mistaken for quotes or delimiters.
func hoistCodeBlocks(text string) (string, *codeBlocks) {
	if !strings.Contains(text, "```") {
		return text, nil
	}
	// A token that the text does not hold, so restoring cannot misplace a block.
	cb := &codeBlocks{prefix: "agentkitcode"}
	for strings.Contains(text, cb.prefix) {
		cb.prefix += "x"
	}
	text = reCodeBlock.ReplaceAllStringFunc(text, func(b string) string {
		cb.blocks = append(cb.blocks, b)
		return cb.token(len(cb.blocks) - 1)
	})
	return text, cb
}

var reCodeBlock = regexp.MustCompile("(?ms)^```\\w*$\n.*?^```$")

// codeBlocks are the fenced blocks taken out of a reply while it is trimmed.
type codeBlocks struct {
	prefix string
	blocks []string
}

func (c *codeBlocks) token(i int) string { return c.prefix + strconv.Itoa(i) + "k" }
