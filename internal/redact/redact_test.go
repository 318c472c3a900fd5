package redact_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/redact"
)

func TestValues(t *testing.T) {
	r := redact.New("hunter2!pw", "abc123", "abc123xyz", "")
	cases := []struct{ in, want string }{
		{"login with hunter2!pw now", "login with [REDACTED] now"},
		{"abc123xyz and abc123", "[REDACTED] and [REDACTED]"},
		{`{"text":"pw is hunter2!pw"}`, `{"text":"pw is [REDACTED]"}`},
		{"url?p=hunter2%21pw", "url?p=[REDACTED]"},
		{"nothing secret here", "nothing secret here"},
		{"", ""},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSONEscapedValue(t *testing.T) {
	secret := `pa"ss\word`
	r := redact.New(secret)
	in := `{"type":"text","text":"the password is pa\"ss\\word"}`
	got := r.String(in)
	if strings.Contains(got, `pa\"ss\\word`) || !strings.Contains(got, redact.Mask) {
		t.Fatalf("JSON-escaped secret survived: %s", got)
	}
}

func TestShapes(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"anthropic key", "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wxyz-1234 end", "key [REDACTED] end"},
		{"openai key", "OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz012345", "OPENAI [REDACTED]"},
		{"github token", "token ghp_0123456789abcdefghijABCDEFGHIJ012345 used", "token [REDACTED] used"},
		{"github pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"},
		{"gitlab", "glpat-abcdefghij0123456789", "[REDACTED]"},
		{"aws", "id AKIAIOSFODNN7EXAMPLE ok", "id [REDACTED] ok"},
		{"google", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "[REDACTED]"},
		{"slack", "xoxb-123456789012-abcdefghijkl", "[REDACTED]"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED]"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop0123456789", "Authorization: Bearer [REDACTED]"},
		{"url credentials", "cloning https://bob:s3cr3tP4ss@example.com/x.git", "cloning https://bob:[REDACTED]@example.com/x.git"},
		{"env assignment", "ANTHROPIC_API_KEY=abc-def-ghi", "ANTHROPIC_API_KEY=[REDACTED]"},
		{"json password", `{"password": "correct horse"}`, `{"password": "[REDACTED] horse"}`},
		{"yaml token", "auth_token: q1w2e3r4t5", "auth_token: [REDACTED]"},
		{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter", "[REDACTED]\nafter"},
		{"truncated private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "[REDACTED]"},
		// Things that look close but are not secrets stay as they are.
		{"token counts", `"usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}`, `"usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}`},
		{"variable reference", "password=$DB_PASSWORD", "password=$DB_PASSWORD"},
		{"boolean", "secret: false", "secret: false"},
		{"prose", "I added a token bucket to the rate limiter.", "I added a token bucket to the rate limiter."},
		{"session id", `"session_id":"8d3c1f5e-2b7a-4c1e-9f0a-123456789abc"`, `"session_id":"8d3c1f5e-2b7a-4c1e-9f0a-123456789abc"`},
	}
	var r *redact.Redactor // nil: shapes only
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := r.String(c.in); got != c.want {
				t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestIdempotent(t *testing.T) {
	r := redact.New("topsecretvalue")
	in := "a topsecretvalue b ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxx c"
	once := r.String(in)
	if twice := r.String(once); twice != once {
		t.Fatalf("not idempotent:\n%q\n%q", once, twice)
	}
}

func TestWith(t *testing.T) {
	r := redact.New("first-secret").With("second-secret")
	got := r.String("first-secret second-secret")
	if got != "[REDACTED] [REDACTED]" {
		t.Fatalf("got %q", got)
	}
	var nilR *redact.Redactor
	if got := nilR.With("x-secret-x").String("a x-secret-x"); got != "a [REDACTED]" {
		t.Fatalf("nil With: %q", got)
	}
}

func TestStrings(t *testing.T) {
	r := redact.New("s3cr3t-value")
	got := r.Strings([]string{"a s3cr3t-value", "plain"})
	if !slices.Equal(got, []string{"a [REDACTED]", "plain"}) {
		t.Fatalf("got %q", got)
	}
}

func TestEnvHelpers(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"AGENTKIT_PHONE_PASSWORD=correct-horse",
		"GITHUB_TOKEN=ghp_abc123def456",
		"my_api_key=lowercase-secret",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
		"SHORT_TOKEN=1",
		"HOME=/home/u",
		"=C:=C:\\work",
	}
	names := redact.SecretEnvNames(env)
	wantNames := []string{"AGENTKIT_PHONE_PASSWORD", "GITHUB_TOKEN", "my_api_key", "AWS_SECRET_ACCESS_KEY", "SHORT_TOKEN"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("SecretEnvNames = %q, want %q", names, wantNames)
	}
	vals := redact.SecretValues(env)
	wantVals := []string{"correct-horse", "ghp_abc123def456", "lowercase-secret", "wJalrXUtnFEMI"}
	if !slices.Equal(vals, wantVals) {
		t.Fatalf("SecretValues = %q, want %q", vals, wantVals)
	}
	r := redact.FromEnv(env, "extra-phone-pw")
	got := r.String("correct-horse wJalrXUtnFEMI extra-phone-pw /usr/bin")
	if got != "[REDACTED] [REDACTED] [REDACTED] /usr/bin" {
		t.Fatalf("FromEnv redaction: %q", got)
	}
	for _, c := range []struct {
		kv, name, value string
	}{
		{"A=b=c", "A", "b=c"},
		{"=C:=C:\\x", "=C:", "C:\\x"},
		{"NOVALUE", "NOVALUE", ""},
		{"", "", ""},
	} {
		if n, v := redact.SplitEnv(c.kv); n != c.name || v != c.value {
			t.Errorf("SplitEnv(%q) = %q, %q; want %q, %q", c.kv, n, v, c.name, c.value)
		}
	}
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "CLAUDE_CODE_OAUTH_TOKEN": true,
		"DB_PASSWD": true, "GPG_PASSPHRASE": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"PATH": false, "HOME": false, "AGENTKIT_TASK": false, "SSH_AUTH_SOCK": false,
	} {
		if got := redact.IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzRedact checks that a known secret never survives redaction.
func FuzzRedact(f *testing.F) {
	f.Add("hunter2-password", "prefix %s suffix")
	f.Add(`q"uo\te`, `{"text":"%s"}`)
	f.Add("aaaa", "aaaaaaaaa%saaaa")
	f.Add("päss wörd", "x=%s&y=1")
	f.Fuzz(func(t *testing.T, secret, format string) {
		if secret == "" || strings.ContainsAny(secret, "[]") || strings.Contains(redact.Mask, secret) {
			t.Skip("a secret that overlaps the mask cannot be told apart from it")
		}
		text := strings.ReplaceAll(format, "%s", secret) + secret
		got := redact.New(secret).String(text)
		if strings.Contains(got, secret) {
			t.Fatalf("secret %q survived in %q (from %q)", secret, got, text)
		}
	})
}
