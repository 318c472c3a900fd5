// Package problems holds agentkit's vocabulary for what needs a person (Problem, Code, Reply, Kind) and the store of problems, decisions and the mail they owe.
package problems

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"
)

// Alphabet holds the letters a code is drawn from: no vowels (Y included, so
// no code spells a word) and no look-alikes (L, which reads as 1 or I).
const Alphabet = "BCDFGHJKMNPQRSTVWXZ"

// CodeLen is the number of letters in a code.
const CodeLen = 6

// Code names one problem for ever; it is never reused.
type Code string

// String returns the code in upper case.
func (c Code) String() string { return string(c) }

// ParseCode reads a code case-insensitively, ignoring surrounding spaces.
func ParseCode(s string) (Code, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if len(t) != CodeLen {
		return "", fmt.Errorf("%q is not a problem code: a code is %d letters from %s, like BCDFGH", s, CodeLen, Alphabet)
	}
	for _, r := range t {
		if !strings.ContainsRune(Alphabet, r) {
			return "", fmt.Errorf("%q is not a problem code: a code is %d letters from %s (no vowels, no L), like BCDFGH", s, CodeLen, Alphabet)
		}
	}
	return Code(t), nil
}

// newCode draws a random code from r.
func newCode(r io.Reader) (Code, error) {
	// Rejection sampling keeps every letter equally likely.
	const limit = 256 - 256%len(Alphabet)
	var b [1]byte
	out := make([]byte, 0, CodeLen)
	for len(out) < CodeLen {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", fmt.Errorf("drawing a problem code: %w", err)
		}
		if int(b[0]) >= limit {
			continue
		}
		out = append(out, Alphabet[int(b[0])%len(Alphabet)])
	}
	return Code(out), nil
}

// randReader is where codes come from unless a test injects another source.
var randReader io.Reader = rand.Reader
