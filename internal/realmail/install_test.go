package realmail

import (
	"strings"
	"testing"
)

func TestFindBinariesSaysWhatToInstall(t *testing.T) {
	_, err := findBinaries(func(string) string { return "" })
	if err == nil {
		t.Fatal("no error without any server installed")
	}
	for _, want := range []string{InstallHint, "dovecot", "postfix"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not mention %q", err, want)
		}
	}
}

func TestRenderRefusesPathsTheConfigCannotHold(t *testing.T) {
	if _, err := (dovecotConfig{BaseDir: "/tmp/with space/run"}).render(); err == nil {
		t.Error("dovecot.conf rendered with a path holding a space")
	}
	if _, _, err := (postfixConfig{QueueDir: "/tmp/a,b/queue"}).render(); err == nil {
		t.Error("main.cf rendered with a path holding a comma")
	}
	conf, err := (dovecotConfig{BaseDir: "/tmp/x/run", IMAP: 1143}).render()
	if err != nil || !strings.Contains(string(conf), "port = 1143") {
		t.Errorf("dovecot.conf: %v\n%s", err, conf)
	}
}
