package service

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestSystemdUnit(t *testing.T) {
	u := SystemdUnit("/home/o/go/bin/agentkit", "/home/o/.agentkit")
	for _, want := range []string{
		"ExecStart=/home/o/go/bin/agentkit service run",
		"EnvironmentFile=-/home/o/.agentkit/phone.env",
		"Environment=AGENTKIT_HOME=/home/o/.agentkit",
		"WantedBy=default.target",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("unit lacks %q:\n%s", want, u)
		}
	}
	if u := SystemdUnit("/opt/my tools/agentkit", "/h"); !strings.Contains(u, `ExecStart="/opt/my tools/agentkit" service run`) {
		t.Errorf("path with a space not quoted:\n%s", u)
	}
	if strings.Contains(u, "PASSWORD=") {
		t.Error("the unit must never carry the password itself")
	}
}

func TestLaunchdPlistIsXML(t *testing.T) {
	p := LaunchdPlist("/usr/local/bin/agentkit", "/Users/o/.agentkit & co")
	dec := xml.NewDecoder(strings.NewReader(p))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("not well-formed: %v\n%s", err, p)
		}
	}
	if !strings.Contains(p, "exec &apos;/usr/local/bin/agentkit&apos; service run") && !strings.Contains(p, "exec '/usr/local/bin/agentkit' service run") {
		t.Fatalf("%s", p)
	}
}
