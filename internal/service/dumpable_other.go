//go:build !linux

package service

// MakeNonDumpable does nothing where the platform has no such switch.
func MakeNonDumpable() error { return nil }

// Dumpable reports true where the platform has no such switch.
func Dumpable() (bool, error) { return true, nil }
