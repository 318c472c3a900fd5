package mailbot

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// blank is a space or tab, including Unicode spaces such as NBSP.
const blank = `\t\p{Zs}`

// classifyLine gives a line its class for TrimReply. Cheap literal tests
// run before every regular expression: a reply is mostly quoted lines, and
// each must be classified.
func classifyLine(l string) byte {
	switch {
	case isBlankLine(l):
		return kindEmpty
	case isDelimiterLine(l):
		return kindDelimiter
	}
	// Quoted lines are most of a reply; only embedded markers can start
	// with ">", and few need the lower-cased line.
	if isQuoteLine(l) {
		if isEmbeddedMarker(l, "") {
			return kindEmbedded
		}
		return kindQuote
	}
	lower := strings.ToLower(l)
	switch {
	case isSignatureLine(l, lower):
		return kindSignature
	case isEmbeddedMarker(l, lower):
		return kindEmbedded
	case isHeaderLine(l):
		return kindHeader
	case isQuoteLine(l):
		return kindQuote
	}
	return kindText
}

func isBlankLine(l string) bool {
	for _, r := range l {
		if !isBlankRune(r) {
			return false
		}
	}
	return true
}

// isDelimiterLine: a line made of -_,=+~#*ᐧ— only ("-- ", "_____").
func isDelimiterLine(l string) bool {
	t := strings.TrimFunc(l, isBlankRune)
	if t == "" {
		return false
	}
	for _, r := range t {
		if !strings.ContainsRune("-_,=+~#*ᐧ—", r) {
			return false
		}
	}
	return true
}

func isQuoteLine(l string) bool {
	t := strings.TrimLeftFunc(l, isBlankRune)
	return strings.HasPrefix(t, ">")
}

// lineRE is a regular expression with the literals a matching line must
// hold (any of them), tested first.
type lineRE struct {
	re *regexp.Regexp
	// any: one must occur in the line as is; anyFold: in the lower-cased line.
	any, anyFold []string
	// then: the word that must follow any[0] after white space.
	then string
}

// match tests the line; lower is l lower-cased, or "" to compute it here
// when an anyFold literal needs it.
func (m lineRE) match(l, lower string) bool {
	if lower == "" && len(m.anyFold) > 0 {
		lower = strings.ToLower(l)
	}
	if m.then != "" && !wordFollowedBy(l, m.any[0], m.then) {
		return false
	}
	if len(m.any) > 0 || len(m.anyFold) > 0 {
		hit := false
		for _, w := range m.any {
			if strings.Contains(l, w) {
				hit = true
				break
			}
		}
		for _, w := range m.anyFold {
			if !hit && strings.Contains(lower, w) {
				hit = true
			}
		}
		if !hit {
			return false
		}
	}
	return m.re.MatchString(l)
}

func re(expr string, any ...string) lineRE { return lineRE{re: regexp.MustCompile(expr), any: any} }

func reFold(expr string, anyFold ...string) lineRE {
	return lineRE{re: regexp.MustCompile(expr), anyFold: anyFold}
}

func matchAny(ms []lineRE, l, lower string) bool {
	for _, m := range ms {
		if m.match(l, lower) {
			return true
		}
	}
	return false
}

var reMarkdownLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)

// Mobile signatures, per language. The phrase lists here and below follow
// discourse/email_reply_trimmer (MIT); Russian headers are agentkit's.
const sigStart = `(?i)^[` + blank + `]*`

var signatureREs = []lineRE{
	reFold(sigStart+`從我的 iPhone 傳送`, "從我的"),
	reFold(sigStart+`\w+ from mobile`, "from mobile"),
	reFold(sigStart+`[(<]*Sent (?:from|via|with|by) .+`, "sent "),
	reFold(sigStart+`From my .{1,20}$`, "from my "), // short lines only: "From my point of view, ..." is text
	reFold(sigStart+`Get Outlook for `, "get outlook for "),
	reFold(sigStart+`Envoyé depuis (?:mon|Yahoo Mail)`, "envoyé depuis"),
	reFold(sigStart+`Von meinem .+ gesendet`, "von meinem"),
	reFold(sigStart+`Diese Nachricht wurde von .+ gesendet`, "diese nachricht"),
	reFold(sigStart+`Inviato da `, "inviato da"),
	reFold(sigStart+`Sendt fra min `, "sendt fra min"),
	reFold(sigStart+`Enviado do meu `, "enviado do meu"),
	reFold(sigStart+`Enviado desde mi `, "enviado desde mi"),
	reFold(sigStart+`Verzonden met `, "verzonden met"),
	reFold(sigStart+`Verstuurd vanaf mijn `, "verstuurd vanaf mijn"),
	reFold(sigStart+`från min `, "från min"),
}

// signaturePrefixes start every signature line but "X from mobile"
// (lower-case, after blanks and "(<").
var signaturePrefixes = []string{"從我的", "sent ", "from my ", "get outlook for ", "envoyé depuis", "von meinem",
	"diese nachricht", "inviato da", "sendt fra min", "enviado do meu", "enviado desde mi", "verzonden met",
	"verstuurd vanaf mijn", "från min"}

func isSignatureLine(l, lower string) bool {
	if strings.IndexByte(l, '[') >= 0 {
		l = reMarkdownLink.ReplaceAllString(l, "$1")
		lower = strings.ToLower(l)
	}
	t := strings.TrimLeftFunc(lower, func(r rune) bool { return r == '(' || r == '<' || isBlankRune(r) })
	start := false
	for _, p := range signaturePrefixes {
		if strings.HasPrefix(t, p) {
			start = true
			break
		}
	}
	if !start && !strings.Contains(lower, "from mobile") {
		return false
	}
	return matchAny(signatureREs, l, lower)
}

// Headers of an embedded message, per language: with a date, or with text.
var headerREs = []lineRE{
	re(`^[` + blank + `*]*(?:Sendt|Sent|Date|Le|Gesendet|Enviada em|Enviado|Fecha|Data|Datum|Skickat|发送时间|Отправлено|Дата)[` + blank + `*]*:.*\d`),
	re(`(?i)^[` + blank + `*]*(?:Fra|Til|Emne|From|To|Cc|Reply-To|Subject|De|Expéditeur|À|Destinataire|Répondre à|Objet|Von|An|Betreff|Para|Assunto|Asunto|Da|Risposta|A|Oggetto|Van|Beantwoorden - Aan|Aan|Onderwerp|Från|Till|Ämne|发件人|收件人|主题|От|Кому|Копия|Тема)[` + blank + `*]*:.*[\p{L}\p{M}\p{Nd}\p{Pc}]`),
}

func isHeaderLine(l string) bool {
	if strings.IndexByte(l, ':') < 0 {
		return false
	}
	// A header starts with a word, after blanks and asterisks.
	t := strings.TrimLeftFunc(l, func(r rune) bool { return r == '*' || isBlankRune(r) })
	if r, _ := utf8.DecodeRuneInString(t); !unicode.IsLetter(r) {
		return false
	}
	return matchAny(headerREs, l, "")
}

// windowRE is a marker that may span lines: the literal it needs, which
// lines may start it, and how to find it in a window of lines.
type windowRE struct {
	re        *regexp.Regexp
	word      string
	candidate func(line string) bool
	// then, when set, is the word that must follow word after white space.
	then string
}

func (w windowRE) find(window string) (int, int, bool) {
	if w.then != "" && !wordFollowedBy(window, w.word, w.then) {
		return 0, 0, false
	}
	if loc := w.re.FindStringIndex(window); loc != nil {
		return loc[0], loc[1], true
	}
	return 0, 0, false
}

var (
	// 2015-10-18 0:17 GMT+03:00 Matt Palmer <x@y>: / вт, 5 янв. 2016 г. в 23:39, X <x@y>:
	reDateSomeoneEmail = regexp.MustCompile(`(?m)\d{4}.{1,80}\s?<[^@<>]+@[^@<>.]+\.[^@<>]+>:?$`)
	// X <x@y> wrote on Fri, 28 Apr 2017 ...: / schrieb am
	reSomeoneWroteOnDate = []windowRE{
		{regexp.MustCompile(`(?m)^.+\bwrote\b[\s\p{Zs}]+\bon\b.+[^:]+:`), "wrote", func(l string) bool { return strings.Contains(l, "wrote") }, "on"},
		{regexp.MustCompile(`(?m)^.+\bschrieb\b[\s\p{Zs}]+\bam\b.+[^:]+:`), "schrieb", func(l string) bool { return strings.Contains(l, "schrieb") }, "am"},
	}
	// суббота, 14 марта 2015 г. пользователь X написал: / 23 mar 2017 21:25 "X" <x@y> napisał(a):
	reDateSomeoneWrote = []windowRE{
		{re: regexp.MustCompile(`\d{4}.{1,80}пользователь.{0,80}\n?.{0,80}?написал:`), word: "написал:"},
		{re: regexp.MustCompile(`\d{4}.{1,80}\n?.{0,80}?napisał\(a\):`), word: "napisał(a):"},
		{re: regexp.MustCompile(`\d{4}.{1,80}\n?.{0,80}?пише:`), word: "пише:"},
	}
)

// Markers that start an embedded (quoted or forwarded) message, on one line.
var embeddedREs = []lineRE{
	// Op 10 dec. 2015 18:35 schreef "X" <x@y>: / Am 18.09.2013 um 16:24 schrieb X <x@y>:
	re(`^[`+blank+`>]*(?:Op|Am|Den|søn\.)\s.+\s(?:schreef|schrieb|skrev)\s[^:]+:`, "schreef", "schrieb", "skrev"),
	{re: reDateSomeoneWrote[0].re, any: []string{reDateSomeoneWrote[0].word}},
	{re: reDateSomeoneWrote[1].re, any: []string{reDateSomeoneWrote[1].word}},
	{re: reDateSomeoneWrote[2].re, any: []string{reDateSomeoneWrote[2].word}},
	{re: reDateSomeoneEmail, any: []string{"@"}},
	{re: reSomeoneWroteOnDate[0].re, any: []string{"wrote"}, then: "on"},
	{re: reSomeoneWroteOnDate[1].re, any: []string{"schrieb"}, then: "am"},
	// 2016-03-03 17:21 GMT+01:00 Some One
	re(`^[`+blank+`>]*20\d\d-\d\d-\d\d \d\d:\d\d GMT\+\d\d:\d\d [\w`+blank+`]+$`, "GMT+"),
	// X via Discourse wrote: / schrieb:
	re(`^.+ via .+ (?:wrote|schrieb):?[`+blank+`]*$`, " via "),
	// Some One <x@y> wrote:
	re(`^.+\b[\w.+-]+@[\w.-]+\.\w{2,}\b.+wrote:?$`, "wrote"),
	// Posted by x on 01/21/2016
	reFold(`(?i)^[`+blank+`>]*Posted by .+ on \d{2}/\d{2}/\d{4}$`, "posted by "),
	// Begin forwarded message: / -----Original Message----- / ----- Forwarded Message -----
	reFold(`(?i)^[`+blank+`>]*Begin forwarded message:`, "begin forwarded message:"),
	re(`(?i)^[`+blank+`>*]*-{2,}[`+blank+`]*(?:Forwarded|Original|Reply) Message[`+blank+`]*-{2,}`, "--"),
	reFold(`(?i)^[`+blank+`>]*Début du message transféré :`, "début du message transféré"),
	re(`(?i)^[`+blank+`>*]*-{2,}[`+blank+`]*Message transféré[`+blank+`]*-{2,}`, "--"),
	re(`(?i)^[`+blank+`>*]*-{2,}[`+blank+`]*Ursprüngliche Nachricht[`+blank+`]*-{2,}`, "--"),
	re(`(?i)^[`+blank+`>*]*-{2,}[`+blank+`]*Mensaje original[`+blank+`]*-{2,}`, "--"),
	re(`(?i)^[`+blank+`>*]*-{2,}[`+blank+`]*原始邮件[`+blank+`]*-{2,}`, "--"),
}

func isEmbeddedMarker(l, lower string) bool {
	if startsWroteMarker(l) {
		if _, ok := matchOnDateWrote(l, 0); ok {
			return true
		}
	}
	return matchAny(embeddedREs, l, lower)
}

// wordFollowedBy reports whether s holds first, then white space, then the
// whole word second ("wrote on").
func wordFollowedBy(s, first, second string) bool {
	for {
		i := strings.Index(s, first)
		if i < 0 {
			return false
		}
		s = s[i+len(first):]
		t := strings.TrimLeftFunc(s, unicode.IsSpace)
		if len(t) < len(s) && strings.HasPrefix(t, second) && (len(t) == len(second) || !isWordByte(t[len(second)])) {
			return true
		}
	}
}
