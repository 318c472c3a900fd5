package secrets

import (
	"testing"
	"unicode/utf8"
)

// FuzzCredentialBlob checks that any password setup accepts reads back
// unchanged from its blob, and that no blob makes decoding panic or return
// text that is not valid UTF-8.
func FuzzCredentialBlob(f *testing.F) {
	for _, s := range []string{"abcd efgh ijkl mnop", "ünïcødé 🔑", "a", "\ufffd", "x\x00y"} {
		f.Add(s, []byte(s))
	}
	f.Fuzz(func(t *testing.T, pw string, blob []byte) {
		if s, err := decodeBlob(blob); err == nil && !utf8.ValidString(s) {
			t.Fatalf("decoded %x into invalid UTF-8 %q", blob, s)
		}
		b, err := encodeBlob(pw)
		if err != nil {
			return
		}
		got, err := decodeBlob(b)
		if err != nil || got != pw {
			t.Fatalf("%q encoded as %x decodes to %q, %v", pw, b, got, err)
		}
	})
}
