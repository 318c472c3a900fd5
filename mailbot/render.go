package mailbot

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/problems"
)

// subjectTag starts the subject of every email the bot sends.
const subjectTag = "[agentkit]"

// maxSummaryRunes keeps a subject to one line on a phone's list.
const maxSummaryRunes = 72

// wrapWidth is the width text paragraphs are wrapped to: short lines read on
// a phone and survive quoting.
const wrapWidth = 72

// envelope holds the header fields of one outgoing message.
type envelope struct {
	From       string // the bot's address
	To         string // an owner address
	MessageID  string // without angle brackets
	Date       time.Time
	Subject    string
	InReplyTo  []string
	References []string
}

// buildMessage writes a plain-text UTF-8 message with the bot's headers.
func buildMessage(env envelope, body string) ([]byte, error) {
	// go-message puts each new field on top, so they are set bottom-up to
	// read From, To, Subject, Date first.
	var h mail.Header
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	// RFC 3834: an automatic message, which well-behaved responders leave
	// alone; Exchange reads its own header for the same.
	h.Set("X-Auto-Response-Suppress", "All")
	h.Set("Auto-Submitted", "auto-generated")
	h.SetMsgIDList("References", env.References)
	h.SetMsgIDList("In-Reply-To", env.InReplyTo)
	h.SetMessageID(env.MessageID)
	h.SetDate(env.Date)
	h.SetSubject(env.Subject)
	h.SetAddressList("To", []*mail.Address{{Address: env.To}})
	h.SetAddressList("From", []*mail.Address{{Name: "agentkit", Address: env.From}})
	var buf bytes.Buffer
	w, err := mail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("writing an email: %w", err)
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if _, err := w.Write([]byte(body)); err != nil {
		return nil, fmt.Errorf("writing an email: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("writing an email: %w", err)
	}
	return buf.Bytes(), nil
}

// ProblemSubject is the subject of a problem's email:
// "[agentkit] CODE repo: one-line summary".
func ProblemSubject(p *problems.Problem) string {
	return fmt.Sprintf("%s %s %s: %s", subjectTag, p.Code, p.Repo, cutRunes(oneLine(p.Summary), maxSummaryRunes))
}

// replySubject is the subject of a reply to subject, with one "Re: ".
func replySubject(subject string) string {
	s := strings.TrimSpace(subject)
	for {
		l := strings.ToLower(s)
		if strings.HasPrefix(l, "re:") {
			s = strings.TrimSpace(s[3:])
			continue
		}
		break
	}
	return "Re: " + s
}

// problemBody renders what the owner reads on the phone: what happened, the
// log's tail, the replies that fix it with a one-tap link each, and who is obeyed.
func problemBody(p *problems.Problem, bot string, owners []string, known ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agentkit stopped work in %s and needs your answer.\n\n", p.Repo)
	fmt.Fprintf(&b, "Problem %s: %s\n", p.Code, kindWords(p.Kind))
	if p.Job != "" {
		fmt.Fprintf(&b, "Job: %s\n", p.Job)
	}
	if p.Task != "" {
		fmt.Fprintf(&b, "Task: %s\n", p.Task)
	}
	b.WriteString("\n")
	b.WriteString(wrapText(RedactLog(oneLine(p.Summary), known...), wrapWidth))
	b.WriteString("\n")
	if d := strings.TrimSpace(p.Detail); d != "" {
		b.WriteString("\n")
		b.WriteString(wrapText(RedactLog(d, known...), wrapWidth))
		b.WriteString("\n")
	}
	if tail := logTail(p.LogTail, known...); len(tail) > 0 {
		fmt.Fprintf(&b, "\nLast %d lines of the log:\n----\n", len(tail))
		for _, l := range tail {
			b.WriteString(l)
			b.WriteString("\n")
		}
		b.WriteString("----\n")
	}
	b.WriteString("\nReply with one of:\n")
	subject := replySubject(ProblemSubject(p))
	for _, v := range p.Replies {
		word := string(v)
		shown := word
		if v.TakesWords() {
			word += " "
			shown += " <words>"
		}
		fmt.Fprintf(&b, "\n%s\n  %s\n  %s\n", shown, v.Meaning(), mailtoLink(bot, subject, word))
	}
	b.WriteString("\n")
	b.WriteString(obeyedFooter(owners))
	return b.String()
}

// obeyedFooter says whose replies count, so a forwarded copy explains itself.
func obeyedFooter(owners []string) string {
	return "-- \n" + wrapText(fmt.Sprintf("agentkit obeys replies only from %s, and only when they pass DKIM or SPF for that address's domain. Anything else is ignored.",
		strings.Join(owners, " or ")), wrapWidth) + "\n"
}

// mailtoLink is an RFC 6068 link that opens a reply with the subject and
// body filled in.
func mailtoLink(to, subject, body string) string {
	return "mailto:" + to + "?subject=" + mailtoEscape(subject) + "&body=" + mailtoEscape(body)
}

// mailtoEscape percent-encodes everything but RFC 3986's unreserved
// characters (so spaces are %20, never "+", which mail clients keep as is).
func mailtoEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// kindWords turns "gate_failed" into "gate failed".
func kindWords(k problems.Kind) string { return strings.ReplaceAll(string(k), "_", " ") }

// oneLine folds whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// wrapText wraps each paragraph of s at width columns, keeping blank lines
// and lines that start with spaces (code, lists) as they are.
func wrapText(s string, width int) string {
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			out = append(out, line)
			continue
		}
		var cur string
		for _, w := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = w
			case len([]rune(cur))+1+len([]rune(w)) > width:
				out = append(out, cur)
				cur = w
			default:
				cur += " " + w
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}
