package mailbot

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConfigRealistic(t *testing.T) {
	c, err := LoadConfig("testdata/config/fastmail.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.BotAddress != "agentkit-bot@fastmail.com" || len(c.OwnerAddresses) != 2 {
		t.Errorf("addresses: %q %q", c.BotAddress, c.OwnerAddresses)
	}
	if c.IMAP.Port != 993 || c.IMAP.TLS != TLSImplicit || c.IMAP.Username != "agentkit-bot@fastmail.com" {
		t.Errorf("imap: %+v", c.IMAP)
	}
	if c.SMTP.Port != 587 || c.SMTP.TLS != TLSStartTLS {
		t.Errorf("smtp: %+v", c.SMTP)
	}
	if got := c.HostPatterns(); !reflect.DeepEqual(got, []string{"*.messagingengine.com"}) {
		t.Errorf("trusted hosts default = %q", got)
	}
	if c.DNSServerAddr() != "1.1.1.1:53" {
		t.Errorf("dns = %q", c.DNSServerAddr())
	}
	if c.MaxAge.D() != 72*time.Hour || c.PollInterval.D() != 2*time.Minute {
		t.Errorf("durations: %v %v", c.MaxAge.D(), c.PollInterval.D())
	}
	if !c.IsOwner("JANE.DOE@GMAIL.COM") || c.IsOwner("jane.doe@gmail.co") {
		t.Error("IsOwner is wrong")
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig("testdata/config/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]any{
		"max_message_bytes": {c.MaxMessageBytes, int64(1 << 20)},
		"max_age":           {c.MaxAge.D(), 7 * 24 * time.Hour},
		"control_max_age":   {c.ControlMaxAge.D(), time.Hour},
		"poll_interval":     {c.PollInterval.D(), time.Minute},
		"answers_per_hour":  {c.AnswersPerHour, 10},
		"accept_spf_only":   {c.AcceptSPFOnly, true},
		"processed_keyword": {c.ProcessedKeyword, "agentkit-processed"},
		"processed_folder":  {c.ProcessedFolder, ""},
		"imap.port":         {c.IMAP.Port, 993},
		"smtp.port":         {c.SMTP.Port, 465},
		"smtp.tls":          {c.SMTP.TLS, TLSImplicit},
		"smtp.username":     {c.SMTP.Username, "bot@example.com"},
	}
	for field, gw := range want {
		if gw[0] != gw[1] {
			t.Errorf("%s = %v, want %v", field, gw[0], gw[1])
		}
	}
}

func TestLoadConfigErrorsNameFieldAndLine(t *testing.T) {
	base := "bot_address: bot@example.com\nowner_addresses:\n  - owner@example.org\nimap:\n  host: imap.example.com\nsmtp:\n  host: smtp.example.com\n"
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"owner equals bot", strings.Replace(base, "owner@example.org", "BOT@example.com", 1),
			[]string{":3:", "owner_addresses[0]", "bot's own address"}},
		{"bad tls", base + "  tls: ssl\n", []string{":8:", "smtp.tls", "implicit, starttls or none"}},
		{"none to a remote host", base + "  tls: none\n", []string{":8:", "smtp.tls", "loopback"}},
		{"unknown field", base + "enabled: true\n", []string{"enabled", "8"}},
		{"password in the file", base + "  password: hunter2\n", []string{":8:", "smtp.password", "never holds the password"}},
		{"bad duration", base + "max_age: a week\n", []string{":8:", "max_age", "7d"}},
		{"negative answers", base + "answers_per_hour: 0\n", []string{":8:", "answers_per_hour", "1 or more"}},
		{"display name", strings.Replace(base, "bot@example.com", "Bot <bot@example.com>", 1),
			[]string{":1:", "bot_address", "without a display name"}},
		{"missing owners", "bot_address: bot@example.com\nimap: {host: a.example}\nsmtp: {host: b.example}\n",
			[]string{"owner_addresses", "is empty"}},
		{"bad pattern", base + "trusted_authserv_ids: ['*.com']\n", []string{":8:", "trusted_authserv_ids[0]", "top-level"}},
		{"relative ca file", base + "  ca_file: certs/ca.pem\n", []string{":8:", "smtp.ca_file", "absolute"}},
		{"bad dns", base + "dns_server: '1.1.1.1:99999'\n", []string{":8:", "dns_server"}},
		{"bad keyword", base + "processed_keyword: 'has space'\n", []string{":8:", "processed_keyword"}},
		{"syntax", base + "imap: [\n", []string{"phone.yaml"}},
		{"wrong type", base + "max_message_bytes: lots\n", []string{"max_message_bytes", "8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("phone.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoopbackPlaintextAllowed(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1", "localhost", "127.1.2.3"} {
		y := "bot_address: bot@example.com\nowner_addresses: [o@example.org]\nimap: {host: '" + host + "', tls: none}\nsmtp: {host: '" + host + "', tls: none, port: 2525}\n"
		c, err := ParseConfig("phone.yaml", []byte(y))
		if err != nil {
			t.Errorf("%s: %v", host, err)
			continue
		}
		if c.IMAP.Port != 143 || c.SMTP.Port != 2525 {
			t.Errorf("%s: ports %d %d", host, c.IMAP.Port, c.SMTP.Port)
		}
	}
}

func TestSaveRoundTripAtomic0600(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig("testdata/config/fastmail.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.IMAP.CAFile = ca
	c.ProcessedFolder = "agentkit/done"
	c.AcceptSPFOnly = false
	path := ConfigPath(dir)
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temp file left behind: %v", entries)
	}
	back, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, c)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "max_age: 3d") || !strings.Contains(string(data), "accept_spf_only: false") {
		t.Errorf("saved file:\n%s", data)
	}

	bad := c
	bad.OwnerAddresses = []string{c.BotAddress}
	if err := bad.Save(path); err == nil {
		t.Error("Save accepted an owner equal to the bot")
	}
	again, err := LoadConfig(path)
	if err != nil || !reflect.DeepEqual(again, c) {
		t.Errorf("a refused Save changed the file: %v", err)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "phone.yaml"))
	if err == nil || !strings.Contains(err.Error(), "agentkit phone setup") {
		t.Errorf("err = %v", err)
	}
}
