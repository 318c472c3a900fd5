package runtimes

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// maxLine is the longest output line kept whole; the rest of a longer line is
// dropped (stream-json lines carrying whole files can be megabytes long).
const maxLine = 8 << 20

// readLines calls fn for every line of r (without its line ending) until r
// ends or fails. A line longer than maxLine is cut.
func readLines(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if room := maxLine - len(long); room > 0 {
				long = append(long, chunk[:min(room, len(chunk))]...)
			}
			continue
		}
		if len(chunk) > 0 || long != nil {
			line := chunk
			if long != nil {
				if room := maxLine - len(long); room > 0 {
					long = append(long, chunk[:min(room, len(chunk))]...)
				}
				line = long
			}
			s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
			long = nil
			if s != "" || err == nil {
				fn(s)
			}
		}
		if err != nil {
			return
		}
	}
}

// tail keeps the last lines of a stream, at most limit bytes of them.
type tail struct {
	limit int
	lines []string // lines[start:] are kept
	start int
	size  int
}

func newTail(limit int) *tail { return &tail{limit: limit} }

// add appends a line, dropping the oldest ones beyond the limit.
func (t *tail) add(line string) {
	if len(line) >= t.limit {
		line = line[len(line)-max(t.limit-1, 0):] // with its newline, it fills the tail
	}
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.limit && t.start < len(t.lines)-1 {
		t.size -= len(t.lines[t.start]) + 1
		t.lines[t.start] = ""
		t.start++
	}
	if t.start > 64 && t.start > len(t.lines)/2 {
		// Compact now and then, so dropped lines are freed in amortised O(1).
		n := copy(t.lines, t.lines[t.start:])
		clear(t.lines[n:])
		t.lines = t.lines[:n]
		t.start = 0
	}
}

// String returns the kept lines joined by newlines, without trailing blank lines.
func (t *tail) String() string {
	return strings.TrimRight(strings.Join(t.lines[t.start:], "\n"), "\n \t")
}
