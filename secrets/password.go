// Package secrets carries the phone password from where it is kept to the
// login, in a type that cannot print, log or encode its value.
package secrets

import (
	"fmt"
	"log/slog"
)

// redacted is what every printing or encoding of a Password shows.
const redacted = "[redacted]"

// Password is a secret value that prints, logs and encodes as "[redacted]".
// Its value is reachable only through Reveal, which the login calls.
//
// The value is held by a closure, not a field, so that even reflection-based
// printing of a struct holding a Password in an unexported field (where fmt
// cannot call its methods, and prints bad verbs through pointers) shows only a
// function address, never the text.
type Password struct {
	reveal func() string
}

// NewPassword wraps s; callers should drop their own copy of s afterwards.
func NewPassword(s string) Password {
	return Password{reveal: func() string { return s }}
}

// Reveal returns the password text. Call it only to hand the value to a login
// (SMTP AUTH, IMAP LOGIN), never to print or store it.
func (p Password) Reveal() string {
	if p.reveal == nil {
		return ""
	}
	return p.reveal()
}

// IsZero reports whether the password is empty.
func (p Password) IsZero() bool { return p.Reveal() == "" }

// String returns "[redacted]".
func (Password) String() string { return redacted }

// GoString returns "[redacted]", so %#v does not show the value either.
func (Password) GoString() string { return redacted }

// Format prints "[redacted]" for every verb and flag (%v, %+v, %#v, %s, %q, %x, %d...).
func (Password) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		_, _ = f.Write([]byte(`"` + redacted + `"`))
		return
	}
	_, _ = f.Write([]byte(redacted))
}

// MarshalJSON encodes "[redacted]".
func (Password) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText encodes "[redacted]" (used by YAML, TOML and text encoders).
func (Password) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes log/slog print "[redacted]".
func (Password) LogValue() slog.Value { return slog.StringValue(redacted) }

// GobEncode refuses: a password is never serialised.
func (Password) GobEncode() ([]byte, error) {
	return nil, fmt.Errorf("secrets: a password cannot be encoded; keep it in the secret store")
}

var (
	_ fmt.Stringer   = Password{}
	_ fmt.GoStringer = Password{}
	_ fmt.Formatter  = Password{}
	_ slog.LogValuer = Password{}
)
