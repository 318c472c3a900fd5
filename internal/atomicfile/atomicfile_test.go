package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "phone.yaml")
	if err := Write(p, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("a: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(data) != "a: 2\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%q %v", data, fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), nil, 0o600); err == nil {
		t.Fatal("write into a missing folder succeeded")
	}
}
