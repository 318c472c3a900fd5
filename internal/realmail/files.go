package realmail

import (
	"fmt"
	"os"
	"path/filepath"
)

// mkdirOwned creates a directory with exactly this mode and owner.
func mkdirOwned(path string, mode os.FileMode, uid, gid int) error {
	if err := os.Mkdir(path, mode); err != nil {
		return fmt.Errorf("realmail: %w", err)
	}
	return setOwner(path, mode, uid, gid)
}

// writeOwned writes a new file with exactly this mode and owner.
func writeOwned(path string, data []byte, mode os.FileMode, uid, gid int) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("realmail: %w", err)
	}
	return setOwner(path, mode, uid, gid)
}

// setOwner sets mode (which the umask may have narrowed) and owner.
func setOwner(path string, mode os.FileMode, uid, gid int) error {
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("realmail: %w", err)
	}
	if err := os.Lchown(path, uid, gid); err != nil {
		return fmt.Errorf("realmail: %w", err)
	}
	return nil
}

// makeRoot creates the directory that holds one Start's configuration,
// certificates, logs, sockets, queue and mail. It is not under t.TempDir:
// the servers' unprivileged users must be able to reach it, and Unix socket
// paths must stay short (108 bytes), which a long test name would break.
func makeRoot() (string, error) {
	base := os.TempDir()
	if len(base) > 40 || !reachable(base) {
		base = "/tmp"
	}
	if !reachable(base) {
		return "", fmt.Errorf("realmail: neither $TMPDIR nor /tmp can be entered by every user, which the mail servers' unprivileged processes need")
	}
	dir, err := os.MkdirTemp(base, "realmail-")
	if err != nil {
		return "", fmt.Errorf("realmail: creating the servers' directory: %w", err)
	}
	// Others may enter but not list it.
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("realmail: %w", err)
	}
	return dir, nil
}

// reachable reports whether every user may enter dir and each of its parents.
func reachable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
