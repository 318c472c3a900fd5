package mailbot_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentkit/agentkit/mailbot"
)

func TestRedactLog(t *testing.T) {
	cases := []struct{ in, want string }{
		// Kept: what a reader needs to find the failure.
		{"--- FAIL: TestLogin (0.01s)", "--- FAIL: TestLogin (0.01s)"},
		{"error: commit 3f9a1c2e4b5d6f708192a3b4c5d6e7f809112233 does not build", "error: commit 3f9a1c2e4b5d6f708192a3b4c5d6e7f809112233 does not build"},
		{"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"/tmp/TestWatcherReconnects123456789/001/state/migrations/0002_mailbot.sql:3", "/tmp/TestWatcherReconnects123456789/001/state/migrations/0002_mailbot.sql:3"},
		{"npm ERR! code E401", "npm ERR! code E401"},
		// Token shapes.
		{"remote: using ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "remote: using [redacted]"},
		{"token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "token [redacted]"},
		{"ANTHROPIC: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ANTHROPIC: [redacted]"},
		{"aws AKIAIOSFODNN7EXAMPLE in env", "aws [redacted] in env"},
		{"slack xoxb-123456789012-abcdefghijkl", "slack [redacted]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt [redacted]"},
		// Assignments and headers keep the name.
		{"DB_PASSWORD=s3cr3t-value ./run", "DB_PASSWORD=[redacted] ./run"},
		{`"api_key": "abc123", "user": "x"`, `"api_key": [redacted], "user": "x"`},
		{"curl -H 'Authorization: Bearer abc.def.ghi' https://api", "curl -H 'Authorization: Bearer [redacted] https://api"},
		{"git clone https://deploy:hunter22@git.example.com/repo.git", "git clone https://[redacted]@git.example.com/repo.git"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nnext", "[redacted]\nnext"},
		// A long opaque run mixing digits and letters.
		{"key: AbCdEf0123456789AbCdEf0123456789AbCdEf0123+/", "key: [redacted]"},
	}
	for _, c := range cases {
		if got := mailbot.RedactLog(c.in); got != c.want {
			t.Errorf("RedactLog(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := mailbot.RedactLog("login as bot with correct-horse-9 failed", "correct-horse-9"); strings.Contains(got, "correct-horse-9") {
		t.Errorf("a known secret survived: %q", got)
	}
}

func FuzzRedactLog(f *testing.F) {
	f.Add("password=hunter2 and ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "hunter2x")
	f.Add("--- FAIL: TestX\n    x_test.go:1: boom", "s3cret")
	f.Add("Authorization: Bearer abc", "abcd")
	f.Fuzz(func(t *testing.T, log, secret string) {
		out := mailbot.RedactLog(log, secret)
		if utf8.ValidString(log) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 became invalid: %q -> %q", log, out)
		}
		// A known secret of letters and digits never survives.
		if len(secret) >= 4 && isAlnum(secret) && strings.Contains(out, secret) && !strings.Contains("[redacted]", secret) {
			t.Fatalf("the secret %q survived in %q", secret, out)
		}
	})
}

func isAlnum(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
