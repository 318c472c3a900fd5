package demo

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
)

// email is a message as the owner's phone shows it: who, what, and the text.
type email struct {
	From, Subject string
	Lines         []string // the decoded text, one line each
}

// readEmail decodes a raw message the way a mail app does.
func readEmail(raw []byte) (email, error) {
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return email{}, fmt.Errorf("reading an email: %w", err)
	}
	h := mail.Header{Header: ent.Header}
	var e email
	if e.Subject, err = h.Subject(); err != nil {
		return email{}, fmt.Errorf("reading an email's subject: %w", err)
	}
	if from, err := h.AddressList("From"); err == nil && len(from) == 1 {
		e.From = from[0].Address
		if from[0].Name != "" {
			e.From = from[0].Name + " <" + from[0].Address + ">"
		}
	}
	body, err := io.ReadAll(ent.Body)
	if err != nil {
		return email{}, fmt.Errorf("reading an email's text: %w", err)
	}
	text := strings.TrimRight(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
	e.Lines = strings.Split(text, "\n")
	return e, nil
}

// option is one reply a problem email offers.
type option struct {
	Reply, Meaning, Link string
}

// Options reads the replies a problem email offers: after "Reply with one
// of:", each is the reply, its meaning and its mailto: link, one line each.
func (e email) Options() []option {
	var out []option
	for i, l := range e.Lines {
		link := strings.TrimSpace(l)
		if !strings.HasPrefix(link, "mailto:") || i < 2 {
			continue
		}
		out = append(out, option{Reply: strings.TrimSpace(e.Lines[i-2]), Meaning: strings.TrimSpace(e.Lines[i-1]), Link: link})
	}
	return out
}

// Text returns the lines above the first one that starts with stop (all
// of them when none does) and above the signature delimiter, with runs of
// blank lines made one.
func (e email) Text(stop string) []string {
	var out []string
	for _, l := range e.Lines {
		if (stop != "" && strings.HasPrefix(l, stop)) || l == "-- " {
			break
		}
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
