package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseEnvFiles(t *testing.T) {
	cases := []struct {
		file    string
		want    map[string]string // the last value of each key
		wantErr string
	}{
		{file: "setup-written.env", want: map[string]string{EnvPhonePassword: "abcd efgh ijkl mnop"}},
		{file: "hand-written.env", want: map[string]string{
			"AGENTKIT_HOME":  "/home/jane/.agentkit",
			"LANG":           "en_GB.UTF-8",
			EnvPhonePassword: "pa$$ \"word\" \\ with `ticks` and \\n kept",
			"EMPTY":          "",
		}},
		{file: "crlf-bare.env", want: map[string]string{EnvPhonePassword: "plain value#1", "OTHER": "x"}},
		{file: "last-wins.env", want: map[string]string{EnvPhonePassword: "later wins"}},
		{file: "multiline.env", wantErr: "line 1: the value of AGENTKIT_PHONE_PASSWORD opens a quote that does not close"},
		{file: "unclosed.env", wantErr: "line 1: the value of AGENTKIT_PHONE_PASSWORD opens a quote that does not close"},
		{file: "continuation.env", wantErr: "ends with a backslash"},
		{file: "trailing.env", wantErr: "has text after its closing quote"},
		{file: "no-equals.env", wantErr: "line 1 is not KEY=VALUE"},
		{file: "bad-name.env", wantErr: "line 1: the text before = is not a variable name"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "env", c.file))
			if err != nil {
				t.Fatal(err)
			}
			lines, err := parseEnv(data)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				// An error must never quote the file's values.
				for _, secret := range []string{"Zq9", "word"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error quotes the value %q: %v", secret, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, l := range lines {
				got[l.key] = l.value
			}
			if len(got) != len(c.want) {
				t.Errorf("keys = %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestFormatEnvValueRoundTrips(t *testing.T) {
	for _, s := range []string{
		"abcd efgh ijkl mnop", "it's", `a"b`, `\`, `$HOME`, "`id`", `'"'`, "ünïcødé ✓", " leading and trailing ", "#notacomment", "x=y",
	} {
		v, err := formatEnvValue(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		lines, err := parseEnv([]byte(EnvPhonePassword + "=" + v + "\n"))
		if err != nil {
			t.Fatalf("%q formatted as %s: %v", s, v, err)
		}
		if len(lines) != 1 || lines[0].value != s {
			t.Errorf("%q formatted as %s reads back as %+v", s, v, lines)
		}
	}
	for _, bad := range []string{"", "a\nb", "a\rb", "a\x00b"} {
		if _, err := formatEnvValue(bad); err == nil {
			t.Errorf("formatEnvValue(%q) accepted", bad)
		}
	}
}

// FuzzParseEnv checks that parsing never panics, that a parsed value never
// holds a line break, and that every value setup can write reads back.
func FuzzParseEnv(f *testing.F) {
	for _, name := range []string{"setup-written.env", "hand-written.env", "crlf-bare.env", "unclosed.env", "continuation.env"} {
		data, err := os.ReadFile(filepath.Join("testdata", "env", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if lines, err := parseEnv([]byte(s)); err == nil {
			for _, l := range lines {
				if strings.ContainsAny(l.value, "\n") || !isEnvName(l.key) {
					t.Fatalf("parsed %q into %+v", s, l)
				}
			}
		}
		v, err := formatEnvValue(s)
		if err != nil {
			return
		}
		lines, err := parseEnv([]byte("K=" + v + "\n"))
		if err != nil || len(lines) != 1 || lines[0].value != s {
			t.Fatalf("%q formatted as %q reads back as %+v, %v", s, v, lines, err)
		}
	})
}
