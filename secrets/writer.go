package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// Writer is a Store that can also keep and forget secrets: the Windows
// Credential Manager, and the phone.env file a service loads.
type Writer interface {
	Store
	// Set keeps p under name, replacing what was there.
	Set(name string, p Password) error
	// Delete forgets name; forgetting a secret that is not there is no error.
	Delete(name string) error
}

// Chain asks each store in turn and gives the first secret found.
type Chain []Store

var _ Store = Chain(nil)

// Get returns the named secret from the first store that holds it.
func (c Chain) Get(name string) (Password, error) {
	p, _, err := c.Find(name)
	return p, err
}

// Find returns the named secret and the store it came from. A store that
// fails for another reason than ErrNotFound (a phone.env others can read)
// stops the search, so a refused file is never silently passed over. When
// no store holds the secret the error wraps ErrNotFound and joins each
// store's hint.
func (c Chain) Find(name string) (Password, Store, error) {
	var hints []string
	for _, s := range c {
		p, err := s.Get(name)
		if err == nil {
			return p, s, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return Password{}, s, err
		}
		hints = append(hints, strings.TrimSuffix(err.Error(), ": "+ErrNotFound.Error()))
	}
	if len(hints) == 0 {
		return Password{}, nil, notFound("no secret store is configured")
	}
	return Password{}, nil, notFound("%s", strings.Join(hints, "; "))
}

// sentinelError reads as its message alone but matches a sentinel with
// errors.Is, so a person never sees "secrets: not found" tacked on.
type sentinelError struct {
	msg      string
	sentinel error
}

func (e *sentinelError) Error() string        { return e.msg }
func (e *sentinelError) Is(target error) bool { return target == e.sentinel }

func notFound(format string, args ...any) error {
	return &sentinelError{msg: fmt.Sprintf(format, args...), sentinel: ErrNotFound}
}

// Where says in words where a store keeps its secrets, for agentkit phone
// status: "in the Windows Credential Manager", "from AGENTKIT_PHONE_PASSWORD",
// "in /home/me/.agentkit/phone.env".
func Where(s Store) string {
	switch v := s.(type) {
	case Env, *Env:
		return "from " + EnvPhonePassword
	case *EnvFile:
		return "in " + v.Path
	case *CredentialManager:
		return "in the Windows Credential Manager"
	case nil:
		return "nowhere"
	}
	return fmt.Sprintf("in %T", s)
}

// ForHome returns where agentkit looks for the phone password on this
// platform, in order: on Windows the Credential Manager, then
// AGENTKIT_PHONE_PASSWORD; elsewhere AGENTKIT_PHONE_PASSWORD, then
// home/phone.env (the file a service loads, refused when others can read it).
func ForHome(home string) Chain {
	if k := Keeper(); k != nil {
		return Chain{k, Env{}}
	}
	return Chain{Env{}, &EnvFile{Path: EnvFilePath(home)}}
}

// Keeper returns the store setup keeps the phone password in on this
// platform: the Windows Credential Manager on Windows, nil elsewhere (where
// the password comes from the environment or phone.env).
func Keeper() Writer { return systemKeeper() }
