package secrets_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agentkit/agentkit/secrets"
)

// memVault is the Credential Manager as a map, failing on demand.
type memVault struct {
	creds map[string][]byte
	users map[string]string
	fail  error
}

func newMemVault() *memVault {
	return &memVault{creds: map[string][]byte{}, users: map[string]string{}}
}

func (v *memVault) ReadGeneric(target string) ([]byte, error) {
	if v.fail != nil {
		return nil, v.fail
	}
	b, ok := v.creds[target]
	if !ok {
		return nil, secrets.ErrNotFound
	}
	return append([]byte(nil), b...), nil
}

func (v *memVault) WriteGeneric(target, user, comment string, blob []byte) error {
	if v.fail != nil {
		return v.fail
	}
	v.creds[target] = append([]byte(nil), blob...)
	v.users[target] = user
	return nil
}

func (v *memVault) DeleteGeneric(target string) error {
	if v.fail != nil {
		return v.fail
	}
	if _, ok := v.creds[target]; !ok {
		return secrets.ErrNotFound
	}
	delete(v.creds, target)
	return nil
}

func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func TestCredentialManagerRoundTrip(t *testing.T) {
	v := newMemVault()
	m := &secrets.CredentialManager{Vault: v}
	if _, err := m.Get(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "agentkit:phone") {
		t.Fatalf("empty vault: err = %v", err)
	}
	for _, pw := range []string{"abcd efgh ijkl mnop", "ünïcødé 🔑 pass"} {
		if err := m.Set(secrets.Phone, secrets.NewPassword(pw)); err != nil {
			t.Fatal(err)
		}
		if got := v.creds["agentkit:phone"]; string(got) != string(utf16le(pw)) {
			t.Errorf("blob = %x, want UTF-16LE of the password", got)
		}
		p, err := m.Get(secrets.Phone)
		if err != nil {
			t.Fatal(err)
		}
		if p.Reveal() != pw {
			t.Errorf("Get = %q, want %q", p.Reveal(), pw)
		}
	}
	if v.users["agentkit:phone"] != "agentkit" {
		t.Errorf("user name = %q", v.users["agentkit:phone"])
	}
	if err := m.Delete(secrets.Phone); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.creds["agentkit:phone"]; ok {
		t.Error("Delete left the credential")
	}
	if err := m.Delete(secrets.Phone); err != nil {
		t.Errorf("Delete of a missing credential: %v", err)
	}
}

func TestCredentialManagerReadsHandMadeCredential(t *testing.T) {
	// cmdkey /generic:agentkit:phone /pass:... and the Control Panel store
	// UTF-16LE, some tools with a terminating NUL.
	v := newMemVault()
	v.creds["agentkit:phone"] = append(utf16le("from cmdkey"), 0, 0)
	p, err := (&secrets.CredentialManager{Vault: v}).Get(secrets.Phone)
	if err != nil || p.Reveal() != "from cmdkey" {
		t.Fatalf("got %q, %v", p.Reveal(), err)
	}
}

func TestCredentialManagerRefusesBadBlobs(t *testing.T) {
	cases := map[string][]byte{
		"odd length":     []byte("abc"),
		"lone surrogate": {0x00, 0xD8, 'a', 0},
		"inner NUL":      {'a', 0, 0, 0, 'b', 0},
	}
	for name, blob := range cases {
		v := newMemVault()
		v.creds["agentkit:phone"] = blob
		_, err := (&secrets.CredentialManager{Vault: v}).Get(secrets.Phone)
		if err == nil || errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "remove it there and run agentkit phone setup again") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	v := newMemVault()
	v.creds["agentkit:phone"] = nil
	if _, err := (&secrets.CredentialManager{Vault: v}).Get(secrets.Phone); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("empty blob: err = %v, want ErrNotFound", err)
	}
}

func TestCredentialManagerSetRefusesAndNeverQuotes(t *testing.T) {
	m := &secrets.CredentialManager{Vault: newMemVault()}
	long := strings.Repeat("Zq9", 1000)
	for name, pw := range map[string]string{"empty": "", "line break": "Zq9\nx", "NUL": "Zq9\x00", "too long": long, "bad UTF-8": "Zq9\xff"} {
		err := m.Set(secrets.Phone, secrets.NewPassword(pw))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "Zq9") {
			t.Errorf("%s: error quotes the password: %v", name, err)
		}
	}
	v := newMemVault()
	v.fail = fmt.Errorf("access denied")
	m = &secrets.CredentialManager{Vault: v}
	if err := m.Set(secrets.Phone, secrets.NewPassword("Zq9ok")); err == nil || strings.Contains(err.Error(), "Zq9") || !strings.Contains(err.Error(), "access denied") {
		t.Errorf("failing vault Set: %v", err)
	}
	if _, err := m.Get(secrets.Phone); err == nil || errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("failing vault Get: %v", err)
	}
	if err := m.Delete(secrets.Phone); err == nil {
		t.Error("failing vault Delete: no error")
	}
}
