// Package filelock takes exclusive, process-wide locks on files, released when the process ends however it ends.
package filelock

import (
	"errors"
	"fmt"
	"os"
)

// ErrLocked means another process holds the lock.
var ErrLocked = errors.New("filelock: held by another process")

// Lock is a held lock on a file.
type Lock struct {
	f *os.File
}

// TryLock takes the lock on path without waiting, creating the file when
// needed; it returns ErrLocked when another process holds it.
func TryLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// Note replaces the lock file's content with s, such as the holder's pid.
func (l *Lock) Note(s string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("writing lock file %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.WriteAt([]byte(s), 0); err != nil {
		return fmt.Errorf("writing lock file %s: %w", l.f.Name(), err)
	}
	return nil
}
