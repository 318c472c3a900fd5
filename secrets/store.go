package secrets

import (
	"errors"
	"fmt"
	"os"
)

// Phone names the phone channel's mail password in a Store.
const Phone = "phone"

// EnvPhonePassword is the environment variable that holds the phone password
// where no credential manager is used (a service loads it from
// $AGENTKIT_HOME/phone.env, mode 0600).
const EnvPhonePassword = "AGENTKIT_PHONE_PASSWORD"

// ErrNotFound is returned by Get when the store holds no such secret.
var ErrNotFound = errors.New("secrets: not found")

// Store gives secrets by name. The phone setup adds Set and Delete, and the
// Windows Credential Manager behind the same interface.
type Store interface {
	// Get returns the named secret, or an error wrapping ErrNotFound.
	Get(name string) (Password, error)
}

// Env reads secrets from environment variables; Phone maps to
// AGENTKIT_PHONE_PASSWORD.
type Env struct {
	// Lookup reads a variable; nil means os.LookupEnv. Tests inject a map.
	Lookup func(key string) (string, bool)
}

var _ Store = Env{}

// Get returns the named secret from its environment variable.
func (e Env) Get(name string) (Password, error) {
	key, ok := envNames[name]
	if !ok {
		return Password{}, fmt.Errorf("secret %q is not one agentkit keeps: %w", name, ErrNotFound)
	}
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, ok := lookup(key)
	if !ok || v == "" {
		return Password{}, fmt.Errorf("%s is not set; run agentkit phone setup, or set it in the service's environment ($AGENTKIT_HOME/phone.env): %w", key, ErrNotFound)
	}
	return NewPassword(v), nil
}

var envNames = map[string]string{Phone: EnvPhonePassword}

// Default returns the store this platform uses. For now that is the
// environment everywhere; the phone setup adds the Windows Credential Manager.
func Default() Store { return Env{} }
