package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/phonesetup"
)

func TestLinePrompter(t *testing.T) {
	var out bytes.Buffer
	p := newLinePrompter(strings.NewReader("  answer  \n\nhunter2 with spaces \r\nlast"), &out, true)
	q := phonesetup.Question{Flag: "owner", Text: "Your address", Default: "me@home.test"}
	if a, err := p.Ask(q); err != nil || a != "answer" {
		t.Errorf("Ask = %q, %v", a, err)
	}
	if a, err := p.Ask(q); err != nil || a != "me@home.test" {
		t.Errorf("empty answer = %q, %v; want the default", a, err)
	}
	pw, err := p.Secret(phonesetup.Question{Flag: "password-stdin", Text: "The password"})
	if err != nil || pw.Reveal() != "hunter2 with spaces " {
		t.Errorf("Secret = %q, %v", pw.Reveal(), err)
	}
	if a, err := p.Ask(phonesetup.Question{Flag: "x", Text: "Last"}); err != nil || a != "last" {
		t.Errorf("unterminated last line = %q, %v", a, err)
	}
	_, err = p.Ask(phonesetup.Question{Flag: "smtp", Text: "The SMTP server"})
	if err == nil || err.Error() != `no answer to "The SMTP server" (the input ended); run setup in a terminal, or give --smtp` {
		t.Errorf("EOF: %v", err)
	}
	if !strings.Contains(out.String(), "Your address [me@home.test]: ") || !strings.Contains(out.String(), "The password (typing is hidden): ") || strings.Contains(out.String(), "hunter2") {
		t.Errorf("prompts:\n%s", out.String())
	}

	quiet := newLinePrompter(strings.NewReader("ignored\n"), &out, false)
	if a, err := quiet.Ask(q); err != nil || a != "me@home.test" {
		t.Errorf("no input: %q %v", a, err)
	}
	if _, err := quiet.Ask(phonesetup.Question{Flag: "bot-address", Text: "The bot's email address"}); err == nil || err.Error() != "the bot's email address: give it with --bot-address" {
		t.Errorf("no input, no default: %v", err)
	}
	if a, err := quiet.Ask(phonesetup.Question{Flag: "authserv-id", Text: "Ids", Optional: true}); err != nil || a != "" {
		t.Errorf("optional: %q %v", a, err)
	}
	if _, err := quiet.Secret(phonesetup.Question{Text: "The password"}); err == nil || !strings.Contains(err.Error(), "--password-stdin") {
		t.Errorf("no input secret: %v", err)
	}
}

func TestWrap(t *testing.T) {
	got := wrap("one two three four five six seven", 10)
	if got != "one two\nthree four\nfive six\nseven" {
		t.Errorf("%q", got)
	}
	if got := wrap("https://a.very.long.example/with/a/path short", 10); got != "https://a.very.long.example/with/a/path\nshort" {
		t.Errorf("long word: %q", got)
	}
	var out bytes.Buffer
	p := &linePrompter{out: &out, width: 20}
	p.Say("a line that is much longer than twenty\n  an indented line that is kept as it is")
	if out.String() != "a line that is much\nlonger than twenty\n  an indented line that is kept as it is\n" {
		t.Errorf("Say:\n%s", out.String())
	}
}
