//go:build windows

package secrets

import (
	"errors"

	"github.com/danieljoos/wincred"
)

// winVault is the real Windows Credential Manager. Generic credentials are
// encrypted by DPAPI for the signed-in Windows user and persist on this
// machine only (they do not roam with the profile).
type winVault struct{}

var _ Vault = winVault{}

func (winVault) ReadGeneric(target string) ([]byte, error) {
	c, err := wincred.GetGenericCredential(target)
	if errors.Is(err, wincred.ErrElementNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	blob := append([]byte(nil), c.CredentialBlob...)
	clear(c.CredentialBlob)
	return blob, nil
}

func (winVault) WriteGeneric(target, user, comment string, blob []byte) error {
	c := wincred.NewGenericCredential(target)
	c.UserName = user
	c.Comment = comment
	c.Persist = wincred.PersistLocalMachine
	c.CredentialBlob = blob
	return c.Write()
}

func (winVault) DeleteGeneric(target string) error {
	c, err := wincred.GetGenericCredential(target)
	if errors.Is(err, wincred.ErrElementNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	clear(c.CredentialBlob)
	if err := c.Delete(); err != nil {
		if errors.Is(err, wincred.ErrElementNotFound) {
			return ErrNotFound
		}
		return err
	}
	return nil
}

func systemKeeper() Writer { return &CredentialManager{Vault: winVault{}} }
