package secrets_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/secrets"
)

func TestChainFindsFirstAndSaysWhere(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	e := secrets.Env{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	file := &secrets.EnvFile{Path: secrets.EnvFilePath(home)}
	c := secrets.Chain{e, file}

	_, err := c.Get(secrets.Phone)
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "AGENTKIT_PHONE_PASSWORD is not set") || !strings.Contains(err.Error(), "phone.env does not exist") {
		t.Fatalf("nothing anywhere: %v", err)
	}

	if err := file.Set(secrets.Phone, secrets.NewPassword("from file")); err != nil {
		t.Fatal(err)
	}
	p, s, err := c.Find(secrets.Phone)
	if err != nil || p.Reveal() != "from file" || secrets.Where(s) != "in "+filepath.Join(home, "phone.env") {
		t.Errorf("file: %q %q %v", p.Reveal(), secrets.Where(s), err)
	}

	env[secrets.EnvPhonePassword] = "from env"
	p, s, err = c.Find(secrets.Phone)
	if err != nil || p.Reveal() != "from env" || secrets.Where(s) != "from AGENTKIT_PHONE_PASSWORD" {
		t.Errorf("env: %q %q %v", p.Reveal(), secrets.Where(s), err)
	}
	if w := secrets.Where(&secrets.CredentialManager{}); w != "in the Windows Credential Manager" {
		t.Errorf("Where(credential manager) = %q", w)
	}
	if _, _, err := (secrets.Chain{}).Find(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("empty chain: %v", err)
	}
}

func TestForHomeMatchesPlatform(t *testing.T) {
	home := t.TempDir()
	c := secrets.ForHome(home)
	if runtime.GOOS == "windows" {
		if secrets.Keeper() == nil || len(c) != 2 || secrets.Where(c[0]) != "in the Windows Credential Manager" {
			t.Errorf("windows chain: %v", c)
		}
		return
	}
	if secrets.Keeper() != nil {
		t.Error("a keeper outside Windows")
	}
	if len(c) != 2 || secrets.Where(c[0]) != "from AGENTKIT_PHONE_PASSWORD" || secrets.Where(c[1]) != "in "+filepath.Join(home, "phone.env") {
		t.Errorf("chain: %q %q", secrets.Where(c[0]), secrets.Where(c[1]))
	}
}
