package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentkit/agentkit/internal/phonesetup"
	"github.com/agentkit/agentkit/secrets"
)

// password gets the password: from stdin (--password-stdin), the store it
// is already in (asking whether to keep it), or the terminal. It returns
// the store it came from, nil for a new one.
func (opts *phoneSetupOptions) password(p *linePrompter, chain secrets.Chain, prov phonesetup.Provider) (secrets.Password, secrets.Store, error) {
	if opts.PasswordStdin {
		b, err := io.ReadAll(io.LimitReader(opts.ios.In, 4096))
		if err != nil {
			return secrets.Password{}, nil, fmt.Errorf("reading the password from standard input: %w", err)
		}
		pw := secrets.NewPassword(strings.TrimRight(string(b), "\r\n"))
		clear(b)
		if pw.IsZero() {
			return pw, nil, errors.New("--password-stdin: standard input held no password; pipe it in, like: printf '%s' \"$PASSWORD\" | agentkit phone setup --password-stdin ...")
		}
		return pw, nil, nil
	}
	old, store, err := chain.Find(secrets.Phone)
	if err != nil && !errors.Is(err, secrets.ErrNotFound) {
		return secrets.Password{}, nil, err // a phone.env others can read, an unreadable credential
	}
	if err == nil {
		keep := "yes"
		if p.Interactive() {
			var aerr error
			keep, aerr = p.Ask(phonesetup.Question{Flag: "password-stdin", Text: "A password is already set " + secrets.Where(store) + "; keep it (yes/no)", Default: "yes"})
			if aerr != nil {
				return secrets.Password{}, nil, aerr
			}
		}
		if !strings.HasPrefix(strings.ToLower(keep), "n") {
			return old, store, nil
		}
	}
	if !p.Interactive() {
		return secrets.Password{}, nil, errors.New("no password: give it on standard input with --password-stdin, or set " + secrets.EnvPhonePassword)
	}
	text := "The bot's password"
	if prov.AppPasswords != "" {
		text = "The bot's app password (made at " + prov.AppPasswords + ")"
	}
	for range 3 {
		pw, err := p.Secret(phonesetup.Question{Flag: "password-stdin", Text: text})
		if err != nil {
			return pw, nil, err
		}
		if !pw.IsZero() {
			return pw, nil, nil
		}
		p.Say("The password is empty; type it again.")
	}
	return secrets.Password{}, nil, errors.New("no password was typed")
}

// keepPassword puts the password where agentkit and its service will find
// it: the Windows Credential Manager, or (when asked) phone.env; otherwise
// it explains how to provide it. from is where it already is (nil: typed or
// piped in). It returns how to undo what it stored, and where it is kept.
func (opts *phoneSetupOptions) keepPassword(p *linePrompter, pw secrets.Password, from secrets.Store, home string) (undo func() error, where string, err error) {
	noop := func() error { return nil }
	var w secrets.Writer
	if opts.deps.Keeper != nil {
		if from == secrets.Store(opts.deps.Keeper) {
			return noop, "", nil
		}
		w = opts.deps.Keeper
	} else {
		if _, inFile := from.(*secrets.EnvFile); inFile {
			return noop, "", nil
		}
		envFile := &secrets.EnvFile{Path: secrets.EnvFilePath(home)}
		write := opts.WriteEnv
		if !opts.given["write-env"] && p.Interactive() {
			a, err := p.Ask(phonesetup.Question{Flag: "write-env", Text: "Keep the password in " + envFile.Path + " (readable only by you) for the background service (yes/no)", Default: "yes"})
			if err != nil {
				return nil, "", err
			}
			write = !strings.HasPrefix(strings.ToLower(a), "n")
		}
		if !write {
			if from == nil {
				p.Say(envHowTo(envFile.Path))
			} else {
				p.Say("The password comes from " + secrets.EnvPhonePassword + " in this shell; the background service needs it too: put it in " + envFile.Path + " (agentkit phone setup --write-env does), or in the service's own environment.")
			}
			return noop, "", nil
		}
		w = envFile
	}
	prev, perr := w.Get(secrets.Phone)
	if perr != nil && !errors.Is(perr, secrets.ErrNotFound) {
		return nil, "", perr
	}
	if err := w.Set(secrets.Phone, pw); err != nil {
		return nil, "", err
	}
	undo = func() error {
		if perr == nil {
			return w.Set(secrets.Phone, prev)
		}
		return w.Delete(secrets.Phone)
	}
	return undo, secrets.Where(w), nil
}

// envHowTo explains how to give agentkit the password without storing it.
func envHowTo(envPath string) string {
	return "The password is not stored. agentkit reads it from " + secrets.EnvPhonePassword + ". In a shell, set it without it landing in your history:\n" +
		"    read -rs " + secrets.EnvPhonePassword + " && export " + secrets.EnvPhonePassword + "\n" +
		"For the background service, put the line " + secrets.EnvPhonePassword + "='...' in " + envPath + " and make it private (chmod 600 " + filepath.Base(envPath) + "; agentkit refuses it otherwise), or run agentkit phone setup --write-env."
}
