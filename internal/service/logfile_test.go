package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogFileRotates(t *testing.T) {
	p := filepath.Join(t.TempDir(), "service.log")
	l, err := OpenLog(p, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 39) + "\n" // 40 bytes: two fit in 100, the third rotates
	for i := 0; i < 7; i++ {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	size := func(name string) int64 {
		fi, err := os.Stat(name)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	if size(p) != 40 || size(p+".1") != 80 || size(p+".2") != 80 || size(p+".3") != -1 {
		t.Fatalf("sizes %d %d %d %d", size(p), size(p+".1"), size(p+".2"), size(p+".3"))
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
