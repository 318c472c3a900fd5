package mailbot

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // decode non-UTF-8 charsets
	"github.com/emersion/go-message/mail"
)

// maxTextBytes bounds the decoded text read from one body part.
const maxTextBytes = 512 << 10

// headerField is one top-level header field, in message order.
type headerField struct {
	key   string // canonical, like "Message-Id" or "Dkim-Signature"
	value string // unfolded
}

// parsedMessage is what the decision reads from a raw message.
type parsedMessage struct {
	fields []headerField
	header mail.Header
	// text is the body's text: the first text/plain part, or the first
	// text/html part converted to text when there is no plain one.
	text     string
	fromHTML bool
	// bodyErr says why no text could be read (the command may still come
	// from the subject).
	bodyErr error
}

// count returns how many fields have the canonical key.
func (m *parsedMessage) count(key string) int {
	n := 0
	for _, f := range m.fields {
		if f.key == key {
			n++
		}
	}
	return n
}

// get returns the first value of the canonical key, or "".
func (m *parsedMessage) get(key string) string {
	for _, f := range m.fields {
		if f.key == key {
			return f.value
		}
	}
	return ""
}

// has reports whether a field with the canonical key exists.
func (m *parsedMessage) has(key string) bool {
	for _, f := range m.fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// parseMessage reads the header and the reply text of a raw message. An
// error means the header itself cannot be read.
func parseMessage(raw []byte) (*parsedMessage, error) {
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return nil, fmt.Errorf("reading the message header: %w", err)
	}
	m := &parsedMessage{header: mail.Header{Header: e.Header}}
	for fs := e.Header.Fields(); fs.Next(); {
		m.fields = append(m.fields, headerField{key: fs.Key(), value: fs.Value()})
	}
	m.readText(e)
	return m, nil
}

func (m *parsedMessage) readText(e *message.Entity) {
	mr := mail.NewReader(e)
	var html string
	haveHTML := false
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			if m.text == "" && !haveHTML {
				m.bodyErr = fmt.Errorf("reading the message body: %w", err)
			}
			break
		}
		ih, ok := p.Header.(*mail.InlineHeader)
		if !ok {
			continue // an attachment
		}
		ct, _, _ := ih.ContentType()
		switch ct {
		case "text/plain", "":
			b, _ := io.ReadAll(io.LimitReader(p.Body, maxTextBytes))
			m.text = string(b)
			return
		case "text/html":
			if !haveHTML {
				b, _ := io.ReadAll(io.LimitReader(p.Body, maxTextBytes))
				html, haveHTML = string(b), true
			}
		}
	}
	if haveHTML {
		m.text, m.fromHTML = HTMLToText(html), true
		return
	}
	if m.bodyErr == nil {
		m.bodyErr = fmt.Errorf("the message has no text part")
	}
}

// headerText decodes an RFC 2047 header value, falling back to the raw text.
func (m *parsedMessage) headerText(key string) string {
	v, err := m.header.Text(key)
	if err != nil {
		return m.get(key)
	}
	return strings.TrimSpace(v)
}
