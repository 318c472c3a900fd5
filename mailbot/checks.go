package mailbot

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
)

// describeCommand says in a few words what a command asks.
func describeCommand(c Command) string {
	s := string(c.Verb)
	if c.Words != "" {
		w := c.Words
		if len([]rune(w)) > 60 {
			w = string([]rune(w)[:60]) + "..."
		}
		s += " " + w
	}
	if c.Code != "" {
		s += " for problem " + c.Code
	}
	return s
}

// ownReason says why a message is the bot's own, or "".
func (d *decision) ownReason(m *parsedMessage) string {
	if addr, err := mail.ParseAddress(m.get("From")); err == nil && asciiLower(addr.Address) == asciiLower(d.cfg.BotAddress) {
		return "From is the bot's own address"
	}
	if d.facts != nil {
		if dom := asciiLower(d.facts.OwnMessageIDDomain()); dom != "" {
			id := d.v.MessageID
			if i := strings.LastIndexByte(id, '@'); i >= 0 && asciiLower(id[i+1:]) == dom {
				return "the Message-ID is the bot's own (" + dom + ")"
			}
		}
	}
	return ""
}

// checkFrom returns the one owner address in the one From field, or "" and
// why not.
func (d *decision) checkFrom(m *parsedMessage) (string, string) {
	switch n := m.count("From"); n {
	case 0:
		return "", "the message has no From field"
	case 1:
	default:
		return "", fmt.Sprintf("the message has %d From fields; DKIM signs one and mail clients show another", n)
	}
	raw := m.get("From")
	addrs, err := mail.ParseAddressList(raw)
	if err != nil {
		return "", fmt.Sprintf("From %q cannot be read as an address: %v", raw, err)
	}
	if len(addrs) != 1 {
		return "", fmt.Sprintf("From holds %d addresses; only a single address is obeyed", len(addrs))
	}
	a := addrs[0].Address
	if !d.cfg.IsOwner(a) {
		return "", fmt.Sprintf("From %s is not an owner address in phone.yaml (display names do not count)", a)
	}
	return a, "From " + a + " is an owner address"
}

func (d *decision) checkDuplicates(m *parsedMessage) string {
	var dup []string
	for _, k := range duplicateChecked {
		if n := m.count(k); n > 1 {
			dup = append(dup, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	if len(dup) > 0 {
		return "duplicated header fields: " + strings.Join(dup, ", ") + "; DKIM signs the bottom one while mail clients show the top one"
	}
	if d.v.MessageID == "" {
		return "the message has no Message-ID, so a replay could not be recognised"
	}
	if !m.has("Date") {
		return "the message has no Date"
	}
	if d.v.Date.IsZero() {
		return fmt.Sprintf("the Date %q cannot be read", m.get("Date"))
	}
	return ""
}

// duplicateChecked are the fields that must appear at most once: DKIM signs
// the bottom one while parsers read the top one.
var duplicateChecked = []string{"From", "Sender", "Date", "Subject", "Message-Id", "In-Reply-To", "References", "To", "Cc", "Reply-To", "Content-Type", "Content-Transfer-Encoding", "Mime-Version"}

// readCommand reads the command and code, and lists the headers they rest
// on. Errors about the command or code are returned for their checks; err
// is a store failure.
func (d *decision) readCommand(m *parsedMessage) (cmd Command, cmdE error, code codeResolution, codeE error, used []string, err error) {
	text := TrimReply(m.text)
	fromSubject := false
	if strings.TrimSpace(text) == "" {
		clean, _ := CleanSubject(d.v.Subject)
		text, fromSubject = clean, true
	}
	cmd, cmdE = ParseCommand(text)
	cmd.FromSubject = fromSubject
	if fromSubject {
		used = append(used, "Subject")
	}
	if cmdE != nil && m.bodyErr != nil && !fromSubject {
		cmdE = cmdErr("%v; and the new text could not be read (%v)", cmdE, m.bodyErr)
	}
	if cmdE != nil || !cmd.Verb.NeedsCode() {
		return cmd, cmdE, codeResolution{}, nil, used, nil
	}
	src := CodeSources{Subject: d.v.Subject, InReplyTo: msgIDList(m.get("In-Reply-To")), References: msgIDList(m.get("References"))}
	if !fromSubject {
		src.Text = text
	}
	var lookup ThreadLookup
	if d.facts != nil {
		lookup = d.facts.ProblemByMessageID
	}
	code, codeE = resolveCode(src, lookup)
	var ce *CommandError
	if codeE != nil && !errors.As(codeE, &ce) {
		return cmd, nil, code, nil, nil, codeE
	}
	for _, h := range code.headers {
		if !contains(used, h) {
			used = append(used, h)
		}
	}
	return cmd, nil, code, codeE, used, nil
}

func (d *decision) checkReplay(alignedBs []string) (string, error) {
	if d.facts == nil {
		return "", nil
	}
	seen, err := d.facts.IsProcessed(d.v.MessageID)
	if err != nil {
		return "", fmt.Errorf("checking whether message %s was processed: %w", d.v.MessageID, err)
	}
	if seen {
		return "Message-ID " + d.v.MessageID + " was processed before (a replay)", nil
	}
	bs := alignedBs
	if d.v.Signature != "" && !contains(bs, d.v.Signature) {
		bs = append([]string{d.v.Signature}, bs...)
	}
	for _, b := range bs {
		seen, err := d.facts.IsProcessedSignature(b)
		if err != nil {
			return "", fmt.Errorf("checking whether a signature was processed: %w", err)
		}
		if seen {
			return "its DKIM signature was processed before in another message (a replay with edited headers)", nil
		}
	}
	return "", nil
}

// maxFutureSkew is how far in the future a Date may be (clock skew).
const maxFutureSkew = 24 * time.Hour

func (d *decision) checkAge(m *parsedMessage, cmd Command, now time.Time) (string, bool) {
	limit, setting := d.cfg.MaxAge.D(), "max_age"
	if cmd.Verb == VerbPause || cmd.Verb == VerbResume {
		limit, setting = d.cfg.ControlMaxAge.D(), "control_max_age"
	}
	var at time.Time
	var basis string
	if d.v.Auth != nil && d.v.Auth.DateSigned {
		at, basis = d.v.Date, "its signed Date"
		if at.After(now.Add(maxFutureSkew)) {
			return fmt.Sprintf("its signed Date %s is in the future", at.Format(time.RFC3339)), false
		}
	} else {
		// Unsigned Date: the server's arrival time, or the Date when that is
		// older (an edited Date can only make a message older).
		at, basis = d.v.InternalDate, "its arrival time (INTERNALDATE; the Date is not signed)"
		if at.IsZero() || (!d.v.Date.IsZero() && d.v.Date.Before(at)) {
			at, basis = d.v.Date, "its Date (unsigned)"
		}
	}
	age := now.Sub(at)
	if age > limit {
		return fmt.Sprintf("by %s it is %s old, over %s (%s in phone.yaml)", basis, roundAge(age), roundAge(limit), setting), false
	}
	return fmt.Sprintf("by %s it is %s old, within %s (%s)", basis, roundAge(max(age, 0)), roundAge(limit), setting), true
}

func roundAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	case d >= time.Minute:
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// providerSignature picks the b= of the aligned DKIM signature the provider
// verified (matching header.b's prefix when given), so it is remembered too.
func providerSignature(fields []headerField, fromDomain, headerB string) string {
	first := ""
	for _, f := range fields {
		if f.key != "Dkim-Signature" {
			continue
		}
		t := parseSigTags(f.value)
		if t.b == "" || !alignedRelaxed(t.d, fromDomain) {
			continue
		}
		if headerB != "" && strings.HasPrefix(t.b, headerB) {
			return t.b
		}
		if first == "" {
			first = t.b
		}
	}
	return first
}

// msgID returns a Message-ID without brackets and surrounding space.
func msgID(v string) string {
	v = strings.TrimSpace(stripComments(v))
	if i := strings.IndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			return strings.TrimSpace(v[i+1 : i+j])
		}
	}
	return v
}

// msgIDList returns the Message-IDs of an In-Reply-To or References value.
func msgIDList(v string) []string {
	var out []string
	v = stripComments(v)
	for {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(v[i:], '>')
		if j < 0 {
			break
		}
		if id := strings.TrimSpace(v[i+1 : i+j]); id != "" {
			out = append(out, id)
		}
		v = v[i+j+1:]
	}
	return out
}
