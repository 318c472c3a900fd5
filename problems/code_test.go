package problems

import (
	"bytes"
	"strings"
	"testing"
)

func TestAlphabet(t *testing.T) {
	if len(Alphabet) != 19 {
		t.Fatalf("alphabet has %d letters", len(Alphabet))
	}
	seen := map[rune]bool{}
	for _, r := range Alphabet {
		if strings.ContainsRune("AEIOUY", r) {
			t.Errorf("vowel %c in alphabet", r)
		}
		if strings.ContainsRune("L", r) {
			t.Errorf("look-alike %c in alphabet", r)
		}
		if r < 'A' || r > 'Z' {
			t.Errorf("%c is not an upper-case letter", r)
		}
		if seen[r] {
			t.Errorf("%c twice", r)
		}
		seen[r] = true
	}
}

func TestNewCodeUsesOnlyAlphabet(t *testing.T) {
	for range 1000 {
		c, err := newCode(randReader)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseCode(string(c)); err != nil {
			t.Fatalf("drawn code %q does not parse: %v", c, err)
		}
	}
}

func TestNewCodeRejectsBiasedBytes(t *testing.T) {
	// 255 is above the largest multiple of 19 below 256 and must be skipped.
	r := bytes.NewReader([]byte{255, 0, 1, 2, 3, 4, 5})
	c, err := newCode(r)
	if err != nil {
		t.Fatal(err)
	}
	if c != "BCDFGH" {
		t.Fatalf("got %s", c)
	}
}

func TestParseCode(t *testing.T) {
	good := map[string]Code{"BCDFGH": "BCDFGH", "bcdfgh": "BCDFGH", "  xzwvtq \n": "XZWVTQ", "bCdFgH": "BCDFGH"}
	for in, want := range good {
		got, err := ParseCode(in)
		if err != nil || got != want {
			t.Errorf("ParseCode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "BCDFG", "BCDFGHJ", "BCDFG1", "BCDFGA", "BCDFGY", "BCDFGL", "BC DFG", "ÄCDFGH"} {
		_, err := ParseCode(in)
		if err == nil {
			t.Errorf("ParseCode(%q) accepted", in)
			continue
		}
		if !strings.Contains(err.Error(), "6 letters") {
			t.Errorf("ParseCode(%q) error does not say what a code looks like: %v", in, err)
		}
	}
}
