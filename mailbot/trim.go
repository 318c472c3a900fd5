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

func restoreCodeBlocks(out string, blocks []string) string {
	for i, b := range blocks {
		out = strings.Replace(out, codeToken(i), b, 1)
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

func classifyLine(l string) byte {
	switch {
	case reEmptyLine.MatchString(l):
		return kindEmpty
	case reDelimiterLine.MatchString(l):
		return kindDelimiter
	case isSignatureLine(l):
		return kindSignature
	case isEmbeddedMarker(l):
		return kindEmbedded
	case isHeaderLine(l):
		return kindHeader
	case reQuoteLine.MatchString(l):
		return kindQuote
	}
	return kindText
}

// blank is a space or tab, including Unicode spaces such as NBSP.
const blank = `\t\p{Zs}`

var (
	reEmptyLine     = regexp.MustCompile(`^[` + blank + `]*$`)
	reDelimiterLine = regexp.MustCompile(`^[` + blank + `]*[-_,=+~#*ᐧ—]+[` + blank + `]*$`)
	reQuoteLine     = regexp.MustCompile(`^[` + blank + `]*>`)
	reMarkdownLink  = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
)

// Mobile signatures, per language.
var signatureREs = compileAll(`(?i)^[`+blank+`]*`, []string{
	`從我的 iPhone 傳送`,
	`\w+ from mobile`,
	`[(<]*Sent (?:from|via|with|by) .+`,
	`From my .{1,20}$`, // only short lines: "From my point of view, ..." is text
	`Get Outlook for `,
	`Envoyé depuis (?:mon|Yahoo Mail)`,
	`Von meinem .+ gesendet`,
	`Diese Nachricht wurde von .+ gesendet`,
	`Inviato da `,
	`Sendt fra min `,
	`Enviado do meu `,
	`Enviado desde mi `,
	`Verzonden met `,
	`Verstuurd vanaf mijn `,
	`från min `,
})

func isSignatureLine(l string) bool {
	if strings.IndexByte(l, '[') >= 0 {
		l = reMarkdownLink.ReplaceAllString(l, "$1")
	}
	return anyMatch(signatureREs, l)
}

// Headers of an embedded message, per language: with a date, or with text.
var headerREs = append(
	compileAll(`^[`+blank+`*]*(?:`, []string{
		`Sendt|Sent|Date|Le|Gesendet|Enviada em|Enviado|Fecha|Data|Datum|Skickat|发送时间|Отправлено|Дата)[` + blank + `*]*:.*\d`,
	}),
	compileAll(`(?i)^[`+blank+`*]*(?:`, []string{
		`Fra|Til|Emne|From|To|Cc|Reply-To|Subject|De|Expéditeur|À|Destinataire|Répondre à|Objet|Von|An|Betreff|Para|Assunto|Asunto|Da|Risposta|A|Oggetto|Van|Beantwoorden - Aan|Aan|Onderwerp|Från|Till|Ämne|发件人|收件人|主题|От|Кому|Копия|Тема)[` + blank + `*]*:.*[\p{L}\p{M}\p{Nd}\p{Pc}]`,
	})...)

func isHeaderLine(l string) bool { return anyMatch(headerREs, l) }

// Markers that start an embedded (quoted or forwarded) message, on one line.
var embeddedREs = []*regexp.Regexp{
	// Op 10 dec. 2015 18:35 schreef "X" <x@y>: / Am 18.09.2013 um 16:24 schrieb X <x@y>:
	regexp.MustCompile(`^[` + blank + `>]*(?:Op|Am|Den|søn\.)\s.+\s(?:schreef|schrieb|skrev)\s[^:]+:`),
	// суббота, 14 марта 2015 г. пользователь X написал: / 23 mar 2017 21:25 "X" <x@y> napisał(a):
	reDateSomeoneWrote[0], reDateSomeoneWrote[1], reDateSomeoneWrote[2],
	// 2015-10-18 0:17 GMT+03:00 Matt Palmer <x@y>: / вт, 5 янв. 2016 г. в 23:39, X <x@y>:
	reDateSomeoneEmail,
	// X <x@y> wrote on Fri, 28 Apr 2017 ...: / schrieb am
	reSomeoneWroteOnDate[0], reSomeoneWroteOnDate[1],
	// 2016-03-03 17:21 GMT+01:00 Some One
	regexp.MustCompile(`^[` + blank + `>]*20\d\d-\d\d-\d\d \d\d:\d\d GMT\+\d\d:\d\d [\w` + blank + `]+$`),
	// X via Discourse wrote: / schrieb:
	regexp.MustCompile(`^.+ via .+ (?:wrote|schrieb):?[` + blank + `]*$`),
	// Some One <x@y> wrote:
	regexp.MustCompile(`^.+\b[\w.+-]+@[\w.-]+\.\w{2,}\b.+wrote:?$`),
	// Posted by x on 01/21/2016
	regexp.MustCompile(`(?i)^[` + blank + `>]*Posted by .+ on \d{2}/\d{2}/\d{4}$`),
	// Begin forwarded message: / -----Original Message----- / ----- Forwarded Message -----
	regexp.MustCompile(`(?i)^[` + blank + `>]*Begin forwarded message:`),
	regexp.MustCompile(`(?i)^[` + blank + `>*]*-{2,}[` + blank + `]*(?:Forwarded|Original|Reply) Message[` + blank + `]*-{2,}`),
	regexp.MustCompile(`(?i)^[` + blank + `>]*Début du message transféré :`),
	regexp.MustCompile(`(?i)^[` + blank + `>*]*-{2,}[` + blank + `]*Message transféré[` + blank + `]*-{2,}`),
	regexp.MustCompile(`(?i)^[` + blank + `>*]*-{2,}[` + blank + `]*Ursprüngliche Nachricht[` + blank + `]*-{2,}`),
	regexp.MustCompile(`(?i)^[` + blank + `>*]*-{2,}[` + blank + `]*Mensaje original[` + blank + `]*-{2,}`),
	regexp.MustCompile(`(?i)^[` + blank + `>*]*-{2,}[` + blank + `]*原始邮件[` + blank + `]*-{2,}`),
}

var (
	reDateSomeoneEmail   = regexp.MustCompile(`(?m)\d{4}.{1,80}\s?<[^@<>]+@[^@<>.]+\.[^@<>]+>:?$`)
	reSomeoneWroteOnDate = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^.+\bwrote\b[\s\p{Zs}]+\bon\b.+[^:]+:`),
		regexp.MustCompile(`(?m)^.+\bschrieb\b[\s\p{Zs}]+\bam\b.+[^:]+:`),
	}
	reDateSomeoneWrote = []*regexp.Regexp{
		regexp.MustCompile(`\d{4}.{1,80}пользователь.{0,80}\n?.{0,80}?написал:`),
		regexp.MustCompile(`\d{4}.{1,80}\n?.{0,80}?napisał\(a\):`),
		regexp.MustCompile(`\d{4}.{1,80}\n?.{0,80}?пише:`),
	}
)

func isEmbeddedMarker(l string) bool {
	if _, ok := matchOnDateWrote(l, 0); ok {
		return true
	}
	return anyMatch(embeddedREs, l)
}

// preprocessReply normalises line endings and quote styles, drops PGP and
// list noise, and joins "On ... wrote:" markers that a client wrapped over
// a few lines.
func preprocessReply(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = rePGPHead.ReplaceAllString(text, "")
	text = rePGPSig.ReplaceAllString(text, "")
	text = reUnsubscribe.ReplaceAllString(text, "")
	text = reAliasQuote.ReplaceAllString(text, "")
	text = quoteEnclosed(text)
	text = reQuotePrefix.ReplaceAllStringFunc(text, func(p string) string {
		return reQuoteMark.ReplaceAllString(p, ">")
	})
	text = joinWrappedMarkers(text)
	return strings.TrimSpace(text)
}

var (
	rePGPHead     = regexp.MustCompile(`(?i)\A-----BEGIN PGP SIGNED MESSAGE-----\n(?:Hash: \w+)?\s+`)
	rePGPSig      = regexp.MustCompile(`(?ms)^-----BEGIN PGP SIGNATURE-----$.+?^-----END PGP SIGNATURE-----`)
	reUnsubscribe = regexp.MustCompile(`(?im)^Unsubscribe: .+@.+(?:\n.+http:.+)?\s*\z`)
	reAliasQuote  = regexp.MustCompile(`(?m)^.*>{5} "[^"\n]+" == .+ writes:`)
	// Quote prefixes like "foo> " or "| ", turned into ">".
	reQuotePrefix = regexp.MustCompile(`(?m)^(?:[` + blank + `]*[\p{L}\p{M}]*[>|])+`)
	reQuoteMark   = regexp.MustCompile(`[\p{L}\p{M}]+>|\|`)
	reNewlines    = regexp.MustCompile(`\n+[\s\p{Zs}]*`)
	reEnclosedA   = regexp.MustCompile(`^>>> ?(.+?) ?>>>$`)
	reEnclosedB   = regexp.MustCompile(`^>{4,}[` + blank + `]*$`)
	reEnclosedBE  = regexp.MustCompile(`^<{4,}[` + blank + `]*$`)
)

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

// joinWrappedMarkers puts "On ... wrote:"-style markers that span up to
// five lines back on one line.
func joinWrappedMarkers(text string) string {
	join := func(m string) string {
		if strings.Count(m, "\n") > 4 {
			return m
		}
		return reNewlines.ReplaceAllString(m, " ")
	}
	// The "On ... wrote:" family, which needs a scanner of its own.
	var b strings.Builder
	for pos := 0; pos < len(text); {
		if pos == 0 || text[pos-1] == '\n' {
			if end, ok := matchOnDateWrote(text, pos); ok {
				b.WriteString(join(text[pos:end]))
				pos = end
				continue
			}
		}
		next := strings.IndexByte(text[pos:], '\n')
		if next < 0 {
			b.WriteString(text[pos:])
			break
		}
		b.WriteString(text[pos : pos+next+1])
		pos += next + 1
	}
	text = b.String()
	for _, re := range reSomeoneWroteOnDate {
		text = re.ReplaceAllStringFunc(text, join)
	}
	for _, re := range reDateSomeoneWrote {
		text = re.ReplaceAllStringFunc(text, join)
	}
	return reDateSomeoneEmail.ReplaceAllStringFunc(text, join)
}

// hoistCodeBlocks replaces ``` fenced blocks by tokens, so their lines are
// not mistaken for quotes or delimiters.
func hoistCodeBlocks(text string) (string, []string) {
	var blocks []string
	text = reCodeBlock.ReplaceAllStringFunc(text, func(b string) string {
		blocks = append(blocks, b)
		return codeToken(len(blocks) - 1)
	})
	return text, blocks
}

var reCodeBlock = regexp.MustCompile("(?ms)^```\\w*$\n.*?^```$")

func codeToken(i int) string { return "agentkitcodeblock" + strconv.Itoa(i) + "x" }

func compileAll(prefix string, alts []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(alts))
	for i, a := range alts {
		out[i] = regexp.MustCompile(prefix + a)
	}
	return out
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
