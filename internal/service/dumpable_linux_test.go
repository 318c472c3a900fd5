package service

import (
	"os"
	"os/exec"
	"testing"
)

func TestMakeNonDumpable(t *testing.T) {
	if os.Getenv("DUMPABLE_CHILD") == "1" {
		if err := MakeNonDumpable(); err != nil {
			os.Exit(2)
		}
		if d, err := Dumpable(); err != nil || d {
			os.Exit(3)
		}
		os.Exit(0)
	}
	// In a child, so the test binary itself stays debuggable.
	cmd := exec.Command(os.Args[0], "-test.run=TestMakeNonDumpable")
	cmd.Env = append(os.Environ(), "DUMPABLE_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
