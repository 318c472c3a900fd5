package mailbot

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToText turns an HTML reply into plain text for TrimReply: block
// elements and <br> become line breaks, <blockquote> content becomes "> "
// quoted lines, <hr> becomes a delimiter line, Gmail's quote container
// (class gmail_quote) and Outlook for Mac's (id OLK_SRC_BODY_SECTION) are
// dropped, and Outlook's quoted original (from id appendonsend or
// divRplyFwdMsg onwards) is cut off. Styles, scripts and the head are
// skipped.
func HTMLToText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	w := &textWriter{}
	skipTag, skipDepth := "", 0
	pre := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if skipDepth > 0 {
			switch tt {
			case html.StartTagToken:
				if tok.Data == skipTag {
					skipDepth++
				}
			case html.EndTagToken:
				if tok.Data == skipTag {
					skipDepth--
				}
			}
			continue
		}
		switch tt {
		case html.TextToken:
			if pre > 0 {
				w.raw(tok.Data)
			} else {
				w.text(tok.Data)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			id, class := attr(tok, "id"), attr(tok, "class")
			if id == "appendonsend" || id == "divRplyFwdMsg" {
				return w.String()
			}
			if skipElement(tok.DataAtom) || hasClass(class, "gmail_quote") || hasClass(class, "gmail_quote_container") || id == "OLK_SRC_BODY_SECTION" {
				if tt == html.StartTagToken && !isVoid(tok.DataAtom) {
					skipTag, skipDepth = tok.Data, 1
				}
				continue
			}
			switch tok.DataAtom {
			case atom.Br:
				w.newline()
			case atom.Hr:
				w.block()
				w.raw("________________________________")
				w.newline()
			case atom.Blockquote:
				w.block()
				w.quote++
			case atom.Pre:
				w.block()
				pre++
			case atom.Li:
				w.block()
				w.text("- ")
			default:
				if isBlock(tok.DataAtom) {
					w.block()
				}
			}
		case html.EndTagToken:
			switch tok.DataAtom {
			case atom.Blockquote:
				w.block()
				if w.quote > 0 {
					w.quote--
				}
			case atom.Pre:
				w.block()
				if pre > 0 {
					pre--
				}
			case atom.P:
				w.block()
				w.newline()
			default:
				if isBlock(tok.DataAtom) {
					w.block()
				}
			}
		}
	}
	return w.String()
}

// textWriter builds text line by line, collapsing HTML whitespace and
// prefixing quoted lines.
type textWriter struct {
	out   strings.Builder
	line  strings.Builder
	quote int // blockquote depth
	// lineQuote is the depth when the current line got its first text.
	lineQuote int
	space     bool // a space is owed before the next word
}

func (w *textWriter) text(s string) {
	s = strings.ReplaceAll(s, "\u00a0", " ")
	fields := strings.Fields(s)
	if len(fields) == 0 {
		if len(s) > 0 {
			w.space = true
		}
		return
	}
	if isHTMLSpace(s[0]) {
		w.space = true
	}
	for i, f := range fields {
		if w.line.Len() > 0 && (w.space || i > 0) {
			w.line.WriteByte(' ')
		}
		if w.line.Len() == 0 {
			w.lineQuote = w.quote
		}
		w.line.WriteString(f)
		w.space = false
	}
	w.space = isHTMLSpace(s[len(s)-1])
}

func (w *textWriter) raw(s string) {
	s = strings.ReplaceAll(s, "\u00a0", " ")
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			w.newline()
		}
		if w.line.Len() == 0 {
			w.lineQuote = w.quote
		}
		w.line.WriteString(part)
	}
}

// newline ends the current line (an empty one too, as <br> does).
func (w *textWriter) newline() {
	q := w.lineQuote
	if w.line.Len() == 0 {
		q = w.quote
	}
	w.out.WriteString(strings.Repeat("> ", q))
	w.out.WriteString(strings.TrimRight(w.line.String(), " "))
	w.out.WriteByte('\n')
	w.line.Reset()
	w.space = false
}

// block ends the current line if it has text.
func (w *textWriter) block() {
	if w.line.Len() > 0 {
		w.newline()
	}
	w.space = false
}

func (w *textWriter) String() string {
	w.block()
	s := strings.TrimRight(w.out.String(), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func attr(t html.Token, name string) string {
	for _, a := range t.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasClass(classes, c string) bool {
	for _, f := range strings.Fields(classes) {
		if f == c {
			return true
		}
	}
	return false
}

func skipElement(a atom.Atom) bool {
	switch a {
	case atom.Head, atom.Style, atom.Script, atom.Title, atom.Template, atom.Noscript, atom.Object, atom.Svg:
		return true
	}
	return false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Table, atom.Tr, atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Section, atom.Article,
		atom.Header, atom.Footer, atom.Address, atom.Body, atom.Html, atom.Center, atom.Form,
		atom.Fieldset, atom.Figure, atom.Main, atom.Nav, atom.Aside, atom.Caption, atom.Td, atom.Th:
		return true
	}
	return false
}
