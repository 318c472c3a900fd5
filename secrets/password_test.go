package secrets_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/agentkit/agentkit/secrets"
)

const secretText = "hunter2-S3cr3t"

type holder struct {
	User     string
	Password secrets.Password
	hidden   secrets.Password
	Ptr      *secrets.Password
	List     []secrets.Password
	Map      map[string]secrets.Password
}

func newHolder() holder {
	p := secrets.NewPassword(secretText)
	return holder{
		User:     "bot@example.test",
		Password: p,
		hidden:   p,
		Ptr:      &p,
		List:     []secrets.Password{p},
		Map:      map[string]secrets.Password{"k": p},
	}
}

func TestPasswordNeverPrints(t *testing.T) {
	p := secrets.NewPassword(secretText)
	h := newHolder()
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%-10v", "%T"}
	for _, verb := range verbs {
		for name, v := range map[string]any{"value": p, "pointer": &p, "struct": h, "struct pointer": &h} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, secretText) || strings.Contains(out, fmt.Sprintf("%x", secretText)) {
				t.Errorf("fmt %s of %s leaks the password: %s", verb, name, out)
			}
		}
	}
	if got := fmt.Sprint(p); got != "[redacted]" {
		t.Errorf("Sprint = %q, want [redacted]", got)
	}
	if got := p.String(); got != "[redacted]" {
		t.Errorf("String = %q", got)
	}
	if got := fmt.Sprintf("%#v", p); got != "[redacted]" {
		t.Errorf("GoString = %q", got)
	}
	err := fmt.Errorf("login failed with %v", p)
	if strings.Contains(err.Error(), secretText) {
		t.Errorf("error leaks: %v", err)
	}
}

func TestPasswordEncodersRedact(t *testing.T) {
	h := newHolder()
	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(j), secretText) || !strings.Contains(string(j), `"Password":"[redacted]"`) {
		t.Errorf("json: %s", j)
	}
	y, err := yaml.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(y), secretText) || !strings.Contains(string(y), "[redacted]") {
		t.Errorf("yaml: %s", y)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(struct{ P secrets.Password }{h.Password}); err == nil {
		t.Errorf("gob encoded a password: %q", buf.Bytes())
	}
}

func TestPasswordSlogRedacts(t *testing.T) {
	p := secrets.NewPassword(secretText)
	for name, mk := range map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		log := slog.New(mk(&buf))
		log.Info("login", "password", p, slog.Any("ptr", &p), "holder", newHolder())
		if strings.Contains(buf.String(), secretText) {
			t.Errorf("slog %s leaks: %s", name, buf.String())
		}
		if !strings.Contains(buf.String(), "[redacted]") {
			t.Errorf("slog %s shows no redaction marker: %s", name, buf.String())
		}
	}
}

func TestPasswordReveal(t *testing.T) {
	p := secrets.NewPassword(secretText)
	if p.Reveal() != secretText {
		t.Fatalf("Reveal = %q", p.Reveal())
	}
	if p.IsZero() {
		t.Error("IsZero on a set password")
	}
	var zero secrets.Password
	if zero.Reveal() != "" || !zero.IsZero() || zero.String() != "[redacted]" {
		t.Errorf("zero password: %q %v %q", zero.Reveal(), zero.IsZero(), zero.String())
	}
}

func TestEnvStore(t *testing.T) {
	env := map[string]string{secrets.EnvPhonePassword: secretText}
	s := secrets.Env{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	p, err := s.Get(secrets.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reveal() != secretText {
		t.Errorf("got %q", p.Reveal())
	}

	_, err = s.Get("bank")
	if !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("unknown name: err = %v, want ErrNotFound", err)
	}

	delete(env, secrets.EnvPhonePassword)
	_, err = s.Get(secrets.Phone)
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), secrets.EnvPhonePassword) {
		t.Errorf("unset variable: err = %v", err)
	}
	env[secrets.EnvPhonePassword] = ""
	if _, err = s.Get(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("empty variable: err = %v", err)
	}
}

func TestEnvStoreReadsProcessEnvironment(t *testing.T) {
	t.Setenv(secrets.EnvPhonePassword, secretText)
	p, err := secrets.Default().Get(secrets.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reveal() != secretText {
		t.Errorf("got %q", p.Reveal())
	}
}
