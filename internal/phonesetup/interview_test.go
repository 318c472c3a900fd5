package phonesetup

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// script answers questions from a list, keyed by flag, and records what was
// asked and said.
type script struct {
	interactive bool
	answers     map[string][]string
	asked       []Question
	said        []string
}

func (s *script) Ask(q Question) (string, error) {
	s.asked = append(s.asked, q)
	if !s.interactive {
		if q.Default == "" && !q.Optional {
			return "", fmt.Errorf("give --%s", q.Flag)
		}
		return q.Default, nil
	}
	list := s.answers[q.Flag]
	if len(list) == 0 {
		return "", fmt.Errorf("script has no answer for --%s (%s)", q.Flag, q.Text)
	}
	a := list[0]
	s.answers[q.Flag] = list[1:]
	if a == "" {
		return q.Default, nil
	}
	return a, nil
}

func (s *script) Secret(Question) (secrets.Password, error) {
	return secrets.Password{}, errors.New("unused")
}
func (s *script) Say(text string)   { s.said = append(s.said, text) }
func (s *script) Interactive() bool { return s.interactive }

func (s *script) flagsAsked() []string {
	var f []string
	for _, q := range s.asked {
		f = append(f, q.Flag)
	}
	return f
}

func (s *script) saidAll() string { return strings.Join(s.said, "\n") }

func TestInterviewGmailGuessed(t *testing.T) {
	s := &script{interactive: true, answers: map[string][]string{
		FlagBotAddress: {"agentkit.bot@gmail.com"},
		FlagProvider:   {""}, // take the guess
		FlagUsername:   {""},
		FlagOwner:      {"jane@example.org, Jane.Doe@work.example"},
	}}
	c := mailbot.DefaultConfig()
	p, err := Interview(s, &c, Given{}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "gmail" {
		t.Errorf("provider = %s", p.Name)
	}
	if got := s.flagsAsked(); !slices.Equal(got, []string{FlagBotAddress, FlagProvider, FlagUsername, FlagOwner}) {
		t.Errorf("asked %v", got)
	}
	if s.asked[1].Default != "gmail" || s.asked[2].Default != "agentkit.bot@gmail.com" {
		t.Errorf("defaults: provider %q, username %q", s.asked[1].Default, s.asked[2].Default)
	}
	if c.IMAP.Host != "imap.gmail.com" || c.SMTP.Port != 465 || !slices.Equal(c.TrustedAuthservIDs, []string{"mx.google.com"}) {
		t.Errorf("preset not applied: %+v", c)
	}
	if !slices.Equal(c.OwnerAddresses, []string{"jane@example.org", "Jane.Doe@work.example"}) || c.SMTP.Username != "agentkit.bot@gmail.com" {
		t.Errorf("owners %v, smtp user %q", c.OwnerAddresses, c.SMTP.Username)
	}
	said := s.saidAll()
	for _, want := range []string{SeparateMailbox, "myaccount.google.com/apppasswords", "not yet (needs OAuth2)", "IMAP imap.gmail.com:993 (implicit TLS)"} {
		if !strings.Contains(said, want) {
			t.Errorf("setup did not say %q:\n%s", want, said)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("result does not validate: %v", err)
	}
}

func TestInterviewCustomReasksBadAnswers(t *testing.T) {
	s := &script{interactive: true, answers: map[string][]string{
		FlagBotAddress: {"Bot <bot@corp.example>", "bot@corp.example"},
		FlagProvider:   {"aol", "custom"},
		FlagIMAP:       {"mail.corp.example:99999", "mail.corp.example"},
		FlagIMAPTLS:    {"ssl", "none", "starttls"},
		FlagSMTP:       {"mail.corp.example:587"},
		FlagSMTPTLS:    {""},
		FlagAuthservID: {"*.com", "mx.corp.example, *.mx.corp.example"},
		FlagUsername:   {"bot"},
		FlagOwner:      {"BOT@corp.example", "me@home.example"},
	}}
	c := mailbot.DefaultConfig()
	c.IMAP.TLS, c.SMTP.TLS = "", ""
	p, err := Interview(s, &c, Given{}, "", nil)
	if err != nil {
		t.Fatalf("%v\nsaid:\n%s", err, s.saidAll())
	}
	if p.Name != Custom {
		t.Errorf("provider %s", p.Name)
	}
	if c.IMAP.Host != "mail.corp.example" || c.IMAP.Port != 993 {
		t.Errorf("imap %+v", c.IMAP)
	}
	if c.IMAP.TLS != mailbot.TLSStartTLS || c.SMTP.Port != 587 || c.SMTP.TLS != mailbot.TLSStartTLS {
		t.Errorf("tls: imap %s, smtp %d %s", c.IMAP.TLS, c.SMTP.Port, c.SMTP.TLS)
	}
	if !slices.Equal(c.TrustedAuthservIDs, []string{"mx.corp.example", "*.mx.corp.example"}) || c.IMAP.Username != "bot" {
		t.Errorf("authserv %v user %q", c.TrustedAuthservIDs, c.IMAP.Username)
	}
	if !slices.Equal(c.OwnerAddresses, []string{"me@home.example"}) {
		t.Errorf("owners %v", c.OwnerAddresses)
	}
	said := s.saidAll()
	for _, want := range []string{
		"not a plain email address",                // display name refused
		`unknown provider "aol"`,                   // unknown provider
		"has no valid port",                        // port 99999
		`is "ssl"; use implicit, starttls or none`, // bad TLS mode
		"allowed only to a loopback address",       // none to a remote host
		"would trust a whole top-level domain",     // *.com
		"the bot's own address",                    // owner == bot
		"An authserv-id is the name your provider writes first",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("setup did not say %q:\n%s", want, said)
		}
	}
	if s.asked[len(s.asked)-1].Default != "" {
		t.Error("the refused owner was offered again as the default")
	}
}

func TestInterviewOutlookRefused(t *testing.T) {
	s := &script{interactive: true, answers: map[string][]string{
		FlagBotAddress: {"bot@outlook.com"},
		FlagProvider:   {""},
	}}
	c := mailbot.DefaultConfig()
	_, err := Interview(s, &c, Given{}, "", nil)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "OAuth2") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(s.saidAll(), "agentkit does not do OAuth2 yet") {
		t.Errorf("said:\n%s", s.saidAll())
	}
}

func TestInterviewSkipsGivenFlagsAndFlagsWinOverPresets(t *testing.T) {
	s := &script{interactive: true, answers: map[string][]string{FlagUsername: {""}}}
	c := mailbot.DefaultConfig()
	c.BotAddress = "bot@fastmail.com"
	c.OwnerAddresses = []string{"me@example.org"}
	reapply := func(c *mailbot.Config) { c.SMTP.Port, c.SMTP.TLS = 587, mailbot.TLSStartTLS }
	reapply(&c)
	_, err := Interview(s, &c, Given{FlagBotAddress: true, FlagOwner: true, FlagSMTP: true, FlagSMTPTLS: true}, "fastmail", reapply)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.flagsAsked(); !slices.Equal(got, []string{FlagUsername}) {
		t.Errorf("asked %v", got)
	}
	if c.SMTP.Host != "smtp.fastmail.com" || c.SMTP.Port != 587 || c.SMTP.TLS != mailbot.TLSStartTLS {
		t.Errorf("smtp %+v", c.SMTP)
	}
}

func TestInterviewKeepsHandEditsOfTheSamePreset(t *testing.T) {
	s := &script{}
	c := mailbot.DefaultConfig()
	c.BotAddress, c.OwnerAddresses = "bot@gmail.com", []string{"me@example.org"}
	p, _ := Lookup("gmail")
	p.Apply(&c)
	c.TrustedAuthservIDs = append(c.TrustedAuthservIDs, "mx.example.org")
	if _, err := Interview(s, &c, Given{}, "", nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.TrustedAuthservIDs, []string{"mx.google.com", "mx.example.org"}) {
		t.Errorf("re-running setup dropped a hand-added authserv-id: %v", c.TrustedAuthservIDs)
	}
}

func TestInterviewWithoutInput(t *testing.T) {
	s := &script{}
	c := mailbot.DefaultConfig()
	_, err := Interview(s, &c, Given{}, "", nil)
	if err == nil || !strings.Contains(err.Error(), "--bot-address") {
		t.Fatalf("err = %v", err)
	}

	// Defaults carry a scripted setup through; a bad default fails at once
	// naming its flag.
	s = &script{}
	c = mailbot.DefaultConfig()
	c.BotAddress = "bot@yahoo.com"
	c.OwnerAddresses = []string{"bot@yahoo.com"}
	_, err = Interview(s, &c, Given{FlagBotAddress: true}, "", nil)
	if err == nil || !strings.Contains(err.Error(), "--owner") || !strings.Contains(err.Error(), "bot's own address") {
		t.Fatalf("err = %v", err)
	}
	if len(s.said) == 0 || strings.Contains(s.saidAll(), SeparateMailbox) {
		t.Errorf("scripted setup said: %q", s.said)
	}
	if _, err := Interview(&script{}, &c, Given{}, "nosuch", nil); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown --provider: %v", err)
	}
}

func TestSplitHostPort(t *testing.T) {
	cases := []struct {
		in         string
		host       string
		port       int
		errPattern string
	}{
		{"imap.example.com:993", "imap.example.com", 993, ""},
		{"imap.example.com", "imap.example.com", 143, ""},
		{"[::1]:1143", "::1", 1143, ""},
		{"127.0.0.1:0", "", 0, "no valid port"},
		{":993", "", 0, "no host"},
		{"", "", 0, "host:port"},
		{"a:b:c", "", 0, "not host:port"},
	}
	for _, c := range cases {
		h, p, err := SplitHostPort(c.in, 143)
		if c.errPattern != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPattern) {
				t.Errorf("%q: err = %v", c.in, err)
			}
			continue
		}
		if err != nil || h != c.host || p != c.port {
			t.Errorf("%q = %q %d %v", c.in, h, p, err)
		}
	}
	if got := SplitList(" a@x, b@y;c@z  d@w "); !slices.Equal(got, []string{"a@x", "b@y", "c@z", "d@w"}) {
		t.Errorf("SplitList = %q", got)
	}
}
