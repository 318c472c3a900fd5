package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/agentkit/agentkit/internal/phonesetup"
	"github.com/agentkit/agentkit/secrets"
)

// linePrompter asks on the terminal: one question per line, answers read
// a line at a time from in, secrets without echo when in is a terminal.
type linePrompter struct {
	in          *bufio.Reader
	fd          int // in's descriptor when it is a terminal, else -1
	out         io.Writer
	interactive bool
	width       int
}

var _ phonesetup.Prompter = (*linePrompter)(nil)

func newLinePrompter(in io.Reader, out io.Writer, interactive bool) *linePrompter {
	p := &linePrompter{in: bufio.NewReader(in), fd: -1, out: out, interactive: interactive, width: 80}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.fd = int(f.Fd())
		if w, _, err := term.GetSize(p.fd); err == nil && w > 40 {
			p.width = min(w, 100)
		}
	}
	return p
}

func (p *linePrompter) Interactive() bool { return p.interactive }

// Ask prints "Text [default]: " and reads one line.
func (p *linePrompter) Ask(q phonesetup.Question) (string, error) {
	if !p.interactive {
		if q.Default == "" && !q.Optional {
			return "", fmt.Errorf("%s: give it with --%s", strings.ToLower(q.Text[:1])+q.Text[1:], q.Flag)
		}
		return q.Default, nil
	}
	if q.Default != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", q.Text, q.Default)
	} else {
		fmt.Fprintf(p.out, "%s: ", q.Text)
	}
	line, err := p.readLine()
	if err != nil {
		return "", p.noAnswer(q, err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return q.Default, nil
	}
	return line, nil
}

// Secret reads without echo from a terminal, or a plain line otherwise.
func (p *linePrompter) Secret(q phonesetup.Question) (secrets.Password, error) {
	if !p.interactive {
		return secrets.Password{}, fmt.Errorf("%s: give it on standard input with --password-stdin", strings.ToLower(q.Text[:1])+q.Text[1:])
	}
	fmt.Fprintf(p.out, "%s (typing is hidden): ", q.Text)
	if p.fd >= 0 {
		b, err := term.ReadPassword(p.fd)
		fmt.Fprintln(p.out)
		if err != nil {
			return secrets.Password{}, fmt.Errorf("reading the password: %w", err)
		}
		pw := secrets.NewPassword(strings.TrimSpace(string(b)))
		clear(b)
		return pw, nil
	}
	line, err := p.readLine()
	fmt.Fprintln(p.out)
	if err != nil {
		return secrets.Password{}, p.noAnswer(q, err)
	}
	return secrets.NewPassword(strings.TrimRight(line, "\r\n")), nil
}

func (p *linePrompter) readLine() (string, error) {
	line, err := p.in.ReadString('\n')
	if errors.Is(err, io.EOF) && line != "" {
		return line, nil
	}
	return line, err
}

func (p *linePrompter) noAnswer(q phonesetup.Question, err error) error {
	fmt.Fprintln(p.out)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("no answer to %q (the input ended); run setup in a terminal, or give --%s", q.Text, q.Flag)
	}
	return fmt.Errorf("reading the answer to %q: %w", q.Text, err)
}

// Say prints a paragraph wrapped to the terminal's width; lines that start
// with spaces (lists) are kept as they are.
func (p *linePrompter) Say(text string) {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, " ") || len(line) <= p.width {
			fmt.Fprintln(p.out, line)
			continue
		}
		fmt.Fprintln(p.out, wrap(line, p.width))
	}
}

// wrap breaks s at spaces so no line passes width (a longer word stays whole).
func wrap(s string, width int) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(s) {
		n := len([]rune(w))
		if i > 0 && col+1+n > width {
			b.WriteByte('\n')
			col = 0
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}
