package phonesetup

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/mailbot"
)

func TestPresetsMakeValidSettings(t *testing.T) {
	want := map[string]struct {
		imap, smtp string
		smtpTLS    mailbot.TLSMode
		authserv   []string
		hosts      []string
		appPw      string
	}{
		"gmail":    {"imap.gmail.com:993", "smtp.gmail.com:465", mailbot.TLSImplicit, []string{"mx.google.com"}, []string{"mx.google.com"}, "myaccount.google.com/apppasswords"},
		"fastmail": {"imap.fastmail.com:993", "smtp.fastmail.com:465", mailbot.TLSImplicit, []string{"*.messagingengine.com"}, []string{"*.messagingengine.com"}, "App passwords"},
		"icloud":   {"imap.mail.me.com:993", "smtp.mail.me.com:587", mailbot.TLSStartTLS, []string{"dkim-verifier.icloud.com", "spf.icloud.com", "dmarc.icloud.com"}, []string{"*.icloud.com", "*.me.com"}, "App-Specific Passwords"},
		"yahoo":    {"imap.mail.yahoo.com:993", "smtp.mail.yahoo.com:465", mailbot.TLSImplicit, []string{"*.yahoo.com"}, []string{"*.yahoo.com"}, "Generate app password"},
	}
	seen := 0
	for _, p := range Providers() {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		seen++
		c := mailbot.DefaultConfig()
		c.BotAddress = "bot@" + p.Domains[0]
		c.OwnerAddresses = []string{"me@example.org"}
		p.Apply(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s preset does not validate: %v", p.Name, err)
			continue
		}
		if c.IMAP.Addr() != w.imap || c.IMAP.TLS != mailbot.TLSImplicit || c.SMTP.Addr() != w.smtp || c.SMTP.TLS != w.smtpTLS {
			t.Errorf("%s servers: %s %s %s %s", p.Name, c.IMAP.Addr(), c.IMAP.TLS, c.SMTP.Addr(), c.SMTP.TLS)
		}
		if !slices.Equal(c.AuthservPatterns(), w.authserv) || !slices.Equal(c.HostPatterns(), w.hosts) {
			t.Errorf("%s trusted: %v / %v", p.Name, c.AuthservPatterns(), c.HostPatterns())
		}
		if c.IMAP.Username != c.BotAddress {
			t.Errorf("%s username = %q", p.Name, c.IMAP.Username)
		}
		if !strings.Contains(p.AppPasswords, w.appPw) {
			t.Errorf("%s app passwords: %q", p.Name, p.AppPasswords)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d presets found", seen, len(want))
	}
}

func TestPresetAuthservIDsMatchRealHeaders(t *testing.T) {
	// authserv-ids seen in real Authentication-Results headers
	// (../shared/corpora/chatmail_core, received at each provider).
	real := map[string][]string{
		"gmail":    {"mx.google.com"},
		"fastmail": {"mx1.messagingengine.com", "mx6.messagingengine.com"},
		"icloud":   {"dkim-verifier.icloud.com", "spf.icloud.com", "dmarc.icloud.com"},
		"yahoo":    {"atlas-production.v2-mail-prod1-gq1.omega.yahoo.com", "atlas119.free.mail.ne1.yahoo.com"},
	}
	for name, ids := range real {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !matchesAny(id, p.AuthservIDs) {
				t.Errorf("%s preset does not trust %s", name, id)
			}
		}
		for _, stranger := range []string{"mx.evil.test", "google.com.evil.test", "messagingengine.com.evil.test"} {
			if matchesAny(stranger, p.AuthservIDs) {
				t.Errorf("%s preset trusts %s", name, stranger)
			}
		}
	}
	p, _ := Lookup("icloud")
	if matchesAny("bimi.icloud.com", p.AuthservIDs) {
		t.Error("icloud trusts bimi.icloud.com, which never vouches for DKIM or SPF")
	}
}

func matchesAny(id string, patterns []string) bool {
	for _, p := range patterns {
		if suffix, ok := strings.CutPrefix(p, "*"); ok && strings.HasSuffix(id, suffix) || id == p {
			return true
		}
	}
	return false
}

func TestLookupAndGuess(t *testing.T) {
	for in, want := range map[string]string{"Gmail": "gmail", " FASTMAIL ": "fastmail", "apple": "icloud", "m365": "outlook", "Office365": "outlook", "custom": "custom"} {
		p, err := Lookup(in)
		if err != nil || p.Name != want {
			t.Errorf("Lookup(%q) = %q, %v", in, p.Name, err)
		}
	}
	if _, err := Lookup("aol"); !errors.Is(err, ErrUnknownProvider) || !strings.Contains(err.Error(), "gmail, fastmail, icloud, yahoo, outlook, custom") {
		t.Errorf("Lookup(aol) = %v", err)
	}
	for addr, want := range map[string]string{
		"agentkit.bot@gmail.com": "gmail", "x@googlemail.com": "gmail", "bot@fastmail.fm": "fastmail",
		"bot@ME.com": "icloud", "bot@yahoo.co.uk": "yahoo", "bot@hotmail.com": "outlook",
		"bot@example.com": "custom", "bot@notgmail.com": "custom", "nobody": "custom",
	} {
		if got := Guess(addr).Name; got != want {
			t.Errorf("Guess(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestOutlookExplainsOAuth(t *testing.T) {
	p, _ := Lookup("outlook")
	if !strings.Contains(p.Unsupported, "OAuth2") || !strings.Contains(p.Unsupported, "agentkit does not do OAuth2 yet") {
		t.Errorf("outlook: %q", p.Unsupported)
	}
	c := mailbot.DefaultConfig()
	p.Apply(&c)
	if c.IMAP.Host != "" {
		t.Error("the outlook preset filled servers")
	}
}

func TestPresetsAreCopies(t *testing.T) {
	p, _ := Lookup("gmail")
	p.AuthservIDs[0] = "changed"
	q, _ := Lookup("gmail")
	if q.AuthservIDs[0] != "mx.google.com" {
		t.Error("changing a returned preset changed the preset")
	}
}
