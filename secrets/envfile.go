package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentkit/agentkit/internal/atomicfile"
)

// EnvFilePath is where the service's phone.env lives under an agentkit home.
func EnvFilePath(home string) string { return filepath.Join(home, "phone.env") }

// maxEnvFileBytes bounds what is read from phone.env.
const maxEnvFileBytes = 64 << 10

// EnvFile is $AGENTKIT_HOME/phone.env, a list of KEY=VALUE lines in the
// syntax both systemd's EnvironmentFile= and a POSIX shell read, holding
// AGENTKIT_PHONE_PASSWORD for a background service. It must be readable by
// its owner only (mode 0600): a file others can read is refused.
type EnvFile struct {
	Path string
}

var _ Writer = (*EnvFile)(nil)

// Get returns the named secret from the file.
func (e *EnvFile) Get(name string) (Password, error) {
	key, ok := envNames[name]
	if !ok {
		return Password{}, notFound("secret %q is not one agentkit keeps", name)
	}
	data, err := e.read()
	if errors.Is(err, fs.ErrNotExist) {
		return Password{}, notFound("%s does not exist", e.Path)
	}
	if err != nil {
		return Password{}, err
	}
	defer clear(data)
	lines, err := parseEnv(data)
	if err != nil {
		return Password{}, fmt.Errorf("%s: %w; rewrite it with agentkit phone setup", e.Path, err)
	}
	for i := len(lines) - 1; i >= 0; i-- { // the last assignment wins, as in a shell
		if lines[i].key == key {
			if lines[i].value == "" {
				return Password{}, notFound("%s sets %s to nothing", e.Path, key)
			}
			return NewPassword(lines[i].value), nil
		}
	}
	return Password{}, notFound("%s does not set %s", e.Path, key)
}

// Set writes the secret into the file with mode 0600, through a temporary
// file and a rename; other variables in the file are kept.
func (e *EnvFile) Set(name string, p Password) error {
	key, ok := envNames[name]
	if !ok {
		return fmt.Errorf("secret %q is not one agentkit keeps", name)
	}
	value, err := formatEnvValue(p.Reveal())
	if err != nil {
		return fmt.Errorf("not written to %s: the password %v", e.Path, err)
	}
	lines, err := e.otherLines(key)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("# agentkit: the phone password for the background service (systemd EnvironmentFile=).\n")
	b.WriteString("# Keep this file readable by you only (chmod 600); agentkit refuses it otherwise.\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(key + "=" + value + "\n")
	defer clear(b.Bytes())
	if err := os.MkdirAll(filepath.Dir(e.Path), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", e.Path, err)
	}
	return atomicfile.Write(e.Path, b.Bytes(), 0o600)
}

// Delete removes the secret's line, and the file when nothing else is left.
func (e *EnvFile) Delete(name string) error {
	key, ok := envNames[name]
	if !ok {
		return nil
	}
	lines, err := e.otherLines(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	keep := false
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			keep = true
		}
	}
	if !keep {
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", e.Path, err)
		}
		return nil
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	return atomicfile.Write(e.Path, data, 0o600)
}

// otherLines returns the file's lines except agentkit's comments and the
// assignments of key; a missing file gives none.
func (e *EnvFile) otherLines(key string) ([]string, error) {
	data, err := e.read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer clear(data)
	parsed, err := parseEnv(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; fix or remove it first", e.Path, err)
	}
	var out []string
	raw := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	skip := map[int]bool{}
	for _, l := range parsed {
		if l.key == key {
			for n := l.first; n <= l.last; n++ {
				skip[n] = true
			}
		}
	}
	for i, l := range raw {
		if skip[i+1] || strings.HasPrefix(l, "# agentkit: ") || strings.HasPrefix(l, "# Keep this file readable by you only") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out, nil
}

// read opens the file and refuses it when others may read it. The mode is
// checked on the open file, so a swap between check and read cannot slip a
// different file in.
func (e *EnvFile) read() ([]byte, error) {
	f, err := os.Open(e.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s: %w", e.Path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", e.Path, err)
	}
	if err := CheckEnvFileMode(e.Path, st.Mode()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", e.Path, err)
	}
	if len(data) > maxEnvFileBytes {
		clear(data)
		return nil, fmt.Errorf("%s is larger than %d bytes; it should hold one line, %s=...", e.Path, maxEnvFileBytes, EnvPhonePassword)
	}
	return data, nil
}

// ErrExposed marks a secrets file that others can read.
var ErrExposed = errors.New("secrets: file readable by others")

// CheckEnvFileMode refuses a phone.env that is not a regular file or that
// its group or others may read or write. Windows has no such mode bits (its
// files are guarded by ACLs), so there only the file type is checked.
func CheckEnvFileMode(path string, mode fs.FileMode) error {
	if !mode.IsRegular() {
		return fmt.Errorf("%s is not a regular file; remove it and run agentkit phone setup again", path)
	}
	if runtime.GOOS != "windows" && mode.Perm()&0o077 != 0 {
		return &sentinelError{msg: fmt.Sprintf("%s can be read or changed by other users (mode %04o), so agentkit will not use it; run: chmod 600 %s", path, mode.Perm(), path), sentinel: ErrExposed}
	}
	return nil
}
