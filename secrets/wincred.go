package secrets

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Vault is the part of the Windows Credential Manager agentkit uses: generic
// credentials by target name, encrypted by Windows (DPAPI) for the signed-in
// user. The real one is in wincred_windows.go; tests use a map.
type Vault interface {
	// ReadGeneric returns a copy of a generic credential's blob, which the
	// caller owns (and clears), or an error wrapping ErrNotFound.
	ReadGeneric(target string) ([]byte, error)
	// WriteGeneric creates or replaces a generic credential.
	WriteGeneric(target, user, comment string, blob []byte) error
	// DeleteGeneric removes a generic credential, or returns an error
	// wrapping ErrNotFound when there is none.
	DeleteGeneric(target string) error
}

// CredentialManager keeps secrets as generic credentials named
// "agentkit:<name>" in the Windows Credential Manager. The password is
// stored as UTF-16LE, as cmdkey and the Control Panel store it, so it can
// also be added there by hand.
type CredentialManager struct {
	Vault Vault
}

var _ Writer = (*CredentialManager)(nil)

// CredentialTarget is the Credential Manager's name for a secret.
func CredentialTarget(name string) string { return "agentkit:" + name }

// maxBlobBytes is CRED_MAX_CREDENTIAL_BLOB_SIZE (5*512).
const maxBlobBytes = 5 * 512

// Get returns the named secret.
func (m *CredentialManager) Get(name string) (Password, error) {
	target := CredentialTarget(name)
	blob, err := m.Vault.ReadGeneric(target)
	if errors.Is(err, ErrNotFound) {
		return Password{}, notFound("the Windows Credential Manager holds no %s; run agentkit phone setup", target)
	}
	if err != nil {
		return Password{}, fmt.Errorf("reading %s from the Windows Credential Manager: %w", target, err)
	}
	s, err := decodeBlob(blob)
	clear(blob)
	if err != nil {
		return Password{}, fmt.Errorf("the Windows Credential Manager's %s %v; remove it there and run agentkit phone setup again", target, err)
	}
	if s == "" {
		return Password{}, notFound("the Windows Credential Manager's %s is empty; run agentkit phone setup", target)
	}
	return NewPassword(s), nil
}

// Set keeps p under name, replacing any earlier value.
func (m *CredentialManager) Set(name string, p Password) error {
	target := CredentialTarget(name)
	blob, err := encodeBlob(p.Reveal())
	if err != nil {
		return fmt.Errorf("not stored in the Windows Credential Manager: the password %v", err)
	}
	defer clear(blob)
	if err := m.Vault.WriteGeneric(target, "agentkit", "agentkit "+name+" password (an app password for the bot's mailbox)", blob); err != nil {
		return fmt.Errorf("storing %s in the Windows Credential Manager: %w", target, err)
	}
	return nil
}

// Delete forgets name; it is no error when there is nothing to forget.
func (m *CredentialManager) Delete(name string) error {
	target := CredentialTarget(name)
	if err := m.Vault.DeleteGeneric(target); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("removing %s from the Windows Credential Manager: %w", target, err)
	}
	return nil
}

// encodeBlob turns a password into UTF-16LE without a terminator. Errors
// never quote the password.
func encodeBlob(s string) ([]byte, error) {
	switch {
	case s == "":
		return nil, errors.New("is empty")
	case !utf8.ValidString(s):
		return nil, errors.New("is not valid UTF-8 text")
	}
	for _, r := range s {
		if r == 0 || r == '\n' || r == '\r' {
			return nil, errors.New("contains a NUL or line break")
		}
	}
	units := utf16.Encode([]rune(s))
	if len(units)*2 > maxBlobBytes {
		return nil, fmt.Errorf("is longer than the %d bytes the Credential Manager holds", maxBlobBytes)
	}
	b := make([]byte, 0, len(units)*2)
	for _, u := range units {
		b = append(b, byte(u), byte(u>>8))
	}
	return b, nil
}

// decodeBlob reads a UTF-16LE blob, dropping a trailing NUL that some tools
// write.
func decodeBlob(b []byte) (string, error) {
	if len(b)%2 != 0 {
		return "", errors.New("is not UTF-16 text (odd length)")
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	for len(units) > 0 && units[len(units)-1] == 0 {
		units = units[:len(units)-1]
	}
	for _, u := range units {
		if u == 0 {
			return "", errors.New("holds a NUL character")
		}
	}
	runes := utf16.Decode(units)
	// A lone surrogate decodes to U+FFFD, which would silently change the
	// password: encoding back must give the same units.
	if again := utf16.Encode(runes); !slices.Equal(again, units) {
		return "", errors.New("is not valid UTF-16 text (a lone surrogate)")
	}
	return string(runes), nil
}
