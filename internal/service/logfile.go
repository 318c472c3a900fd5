package service

import (
	"fmt"
	"os"
	"sync"
)

// LogFile is an append-only log that rotates itself by size: service.log
// becomes service.log.1, and so on up to Keep old files.
type LogFile struct {
	Path    string
	MaxSize int64
	Keep    int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenLog opens (creating with mode 0600) a rotating log file.
func OpenLog(path string, maxSize int64, keep int) (*LogFile, error) {
	l := &LogFile{Path: path, MaxSize: maxSize, Keep: keep}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogFile) open() error {
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the service log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the service log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past MaxSize.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.MaxSize > 0 && l.size > 0 && l.size+int64(len(p)) > l.MaxSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *LogFile) rotate() error {
	l.f.Close()
	for i := l.Keep; i >= 1; i-- {
		from := l.Path
		if i > 1 {
			from = fmt.Sprintf("%s.%d", l.Path, i-1)
		}
		// A missing older file is fine: the log has not rotated that often yet.
		_ = os.Rename(from, fmt.Sprintf("%s.%d", l.Path, i))
	}
	if l.Keep == 0 {
		_ = os.Remove(l.Path)
	}
	return l.open()
}

// Close closes the file.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
