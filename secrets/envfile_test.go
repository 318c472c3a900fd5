package secrets_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/secrets"
)

func TestEnvFileSetGetDelete(t *testing.T) {
	home := t.TempDir()
	f := &secrets.EnvFile{Path: secrets.EnvFilePath(home)}
	if _, err := f.Get(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("missing file: err = %v, want ErrNotFound", err)
	}
	for _, pw := range []string{"abcd efgh ijkl mnop", `it's "quoted" $HOME \ end`} {
		if err := f.Set(secrets.Phone, secrets.NewPassword(pw)); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
			t.Errorf("phone.env mode = %04o, want 0600", st.Mode().Perm())
		}
		got, err := f.Get(secrets.Phone)
		if err != nil {
			t.Fatal(err)
		}
		if got.Reveal() != pw {
			t.Errorf("read back %q, want %q", got.Reveal(), pw)
		}
	}
	data, _ := os.ReadFile(f.Path)
	if n := strings.Count(string(data), secrets.EnvPhonePassword+"="); n != 1 {
		t.Errorf("phone.env has %d assignments after two sets:\n%s", n, data)
	}
	if err := f.Delete(secrets.Phone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("phone.env still exists after deleting its only variable: %v", err)
	}
	if err := f.Delete(secrets.Phone); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestEnvFileKeepsOtherVariables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phone.env")
	os.WriteFile(path, []byte("# mine\nLANG=C\nAGENTKIT_PHONE_PASSWORD=old\nTZ='Europe/Paris'\n"), 0o600)
	f := &secrets.EnvFile{Path: path}
	if err := f.Set(secrets.Phone, secrets.NewPassword("new one")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"# mine\n", "LANG=C\n", "TZ='Europe/Paris'\n", "AGENTKIT_PHONE_PASSWORD='new one'\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("phone.env lacks %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "old") {
		t.Errorf("the old password is still there:\n%s", data)
	}
	if err := f.Delete(secrets.Phone); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if string(data) != "# mine\nLANG=C\nTZ='Europe/Paris'\n" {
		t.Errorf("after delete:\n%s", data)
	}
}

func TestEnvFileRefusedWhenOthersCanRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no mode bits")
	}
	path := filepath.Join(t.TempDir(), "phone.env")
	os.WriteFile(path, []byte("AGENTKIT_PHONE_PASSWORD='Zq9secret'\n"), 0o600)
	f := &secrets.EnvFile{Path: path}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o606} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := f.Get(secrets.Phone)
		if !errors.Is(err, secrets.ErrExposed) || errors.Is(err, secrets.ErrNotFound) {
			t.Fatalf("mode %04o: err = %v, want ErrExposed", mode, err)
		}
		if !strings.Contains(err.Error(), "chmod 600 "+path) || strings.Contains(err.Error(), "Zq9") {
			t.Errorf("mode %04o: %v", mode, err)
		}
		// Setting through a refused file must not quietly make it private.
		if err := f.Set(secrets.Phone, secrets.NewPassword("x")); !errors.Is(err, secrets.ErrExposed) {
			t.Errorf("mode %04o: Set err = %v, want ErrExposed", mode, err)
		}
	}
	// A chain must stop at the refused file rather than fall through.
	os.Chmod(path, 0o644)
	c := secrets.Chain{secrets.Env{Lookup: func(string) (string, bool) { return "", false }}, f}
	if _, err := c.Get(secrets.Phone); !errors.Is(err, secrets.ErrExposed) {
		t.Errorf("chain: err = %v, want ErrExposed", err)
	}
	os.Chmod(path, 0o400)
	if p, err := f.Get(secrets.Phone); err != nil || p.Reveal() != "Zq9secret" {
		t.Errorf("mode 0400: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "phone.env")
	os.Mkdir(dir, 0o700)
	if _, err := (&secrets.EnvFile{Path: dir}).Get(secrets.Phone); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: err = %v", err)
	}
}

func TestEnvFileMalformedNeverQuotesValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phone.env")
	os.WriteFile(path, []byte("AGENTKIT_PHONE_PASSWORD='Zq9secret\n"), 0o600)
	_, err := (&secrets.EnvFile{Path: path}).Get(secrets.Phone)
	if err == nil || errors.Is(err, secrets.ErrNotFound) || strings.Contains(err.Error(), "Zq9") || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v", err)
	}
	os.WriteFile(path, []byte("AGENTKIT_PHONE_PASSWORD=\n"), 0o600)
	if _, err := (&secrets.EnvFile{Path: path}).Get(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("empty value: err = %v, want ErrNotFound", err)
	}
}
