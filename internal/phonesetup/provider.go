// Package phonesetup is what agentkit phone setup knows and does: the mail
// providers it has presets for, the questions it asks, and the checks that
// prove a phone.yaml and its password work before they are saved.
package phonesetup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/mailbot"
)

// Provider is a mail provider's known settings for the bot's mailbox.
type Provider struct {
	// Name is what --provider takes: gmail, fastmail, icloud, yahoo,
	// outlook or custom.
	Name string
	// Title is how people write it.
	Title string
	// IMAP and SMTP are the servers, ports and TLS modes; empty for custom.
	IMAP, SMTP mailbot.Server
	// AuthservIDs are the authserv-ids the provider stamps on the
	// Authentication-Results of incoming mail (exact or *.suffix).
	AuthservIDs []string
	// TrustedHosts name the provider's receiving hosts in Received headers;
	// empty means the same patterns as AuthservIDs.
	TrustedHosts []string
	// AppPasswords says where the provider makes app passwords.
	AppPasswords string
	// Note is anything else to know, such as the user name to log in with.
	Note string
	// Domains are address domains that suggest this provider.
	Domains []string
	// Unsupported, when set, says why agentkit cannot use this provider.
	Unsupported string
}

// Custom is the provider name for any other mail service.
const Custom = "custom"

var providers = []Provider{
	{
		Name:         "gmail",
		Title:        "Gmail",
		IMAP:         mailbot.Server{Host: "imap.gmail.com", Port: 993, TLS: mailbot.TLSImplicit},
		SMTP:         mailbot.Server{Host: "smtp.gmail.com", Port: 465, TLS: mailbot.TLSImplicit},
		AuthservIDs:  []string{"mx.google.com"},
		AppPasswords: "https://myaccount.google.com/apppasswords, signed in as the bot (it needs 2-Step Verification turned on first)",
		Domains:      []string{"gmail.com", "googlemail.com"},
	},
	{
		Name:         "fastmail",
		Title:        "Fastmail",
		IMAP:         mailbot.Server{Host: "imap.fastmail.com", Port: 993, TLS: mailbot.TLSImplicit},
		SMTP:         mailbot.Server{Host: "smtp.fastmail.com", Port: 465, TLS: mailbot.TLSImplicit},
		AuthservIDs:  []string{"*.messagingengine.com"},
		AppPasswords: "Fastmail Settings → Privacy & Security → App passwords (give it IMAP and SMTP access)",
		Note:         "Fastmail stamps mx1, mx2, … .messagingengine.com in turn, so the whole *.messagingengine.com is trusted.",
		Domains:      []string{"fastmail.com", "fastmail.fm", "fastmail.net", "fastmail.org", "fastmail.us", "messagingengine.com"},
	},
	{
		Name:         "icloud",
		Title:        "iCloud Mail",
		IMAP:         mailbot.Server{Host: "imap.mail.me.com", Port: 993, TLS: mailbot.TLSImplicit},
		SMTP:         mailbot.Server{Host: "smtp.mail.me.com", Port: 587, TLS: mailbot.TLSStartTLS},
		AuthservIDs:  []string{"dkim-verifier.icloud.com", "spf.icloud.com", "dmarc.icloud.com"},
		TrustedHosts: []string{"*.icloud.com", "*.me.com"},
		AppPasswords: "https://account.apple.com → Sign-In and Security → App-Specific Passwords (it needs two-factor authentication)",
		Note:         "Log in with the full iCloud address; if IMAP refuses it, try the name before @icloud.com.",
		Domains:      []string{"icloud.com", "me.com", "mac.com"},
	},
	{
		Name:         "yahoo",
		Title:        "Yahoo Mail",
		IMAP:         mailbot.Server{Host: "imap.mail.yahoo.com", Port: 993, TLS: mailbot.TLSImplicit},
		SMTP:         mailbot.Server{Host: "smtp.mail.yahoo.com", Port: 465, TLS: mailbot.TLSImplicit},
		AuthservIDs:  []string{"*.yahoo.com"},
		AppPasswords: "https://login.yahoo.com/account/security → Generate app password",
		Note:         "Yahoo stamps a different atlasNNN….yahoo.com on each message, so the whole *.yahoo.com is trusted.",
		Domains:      []string{"yahoo.com", "ymail.com", "rocketmail.com", "yahoo.co.uk", "yahoo.fr", "yahoo.de", "yahoo.co.jp"},
	},
	{
		Name:  "outlook",
		Title: "Outlook.com / Microsoft 365",
		Unsupported: "Outlook.com and Microsoft 365 let programs use IMAP and SMTP only with OAuth2 sign-in " +
			"(Microsoft turned app passwords and basic authentication off), and agentkit does not do OAuth2 yet. " +
			"Give the bot a mailbox at another provider (gmail, fastmail, icloud, yahoo, or any custom one with app passwords); " +
			"your own replies may still come from Outlook.",
		Domains: []string{"outlook.com", "hotmail.com", "live.com", "msn.com", "outlook.fr", "hotmail.co.uk", "office365.com", "onmicrosoft.com"},
	},
	{
		Name:  Custom,
		Title: "another provider",
		Note:  "Any provider with IMAP, SMTP and app passwords (or a password) works; its help pages name the servers.",
	},
}

// Providers returns every preset, custom last.
func Providers() []Provider {
	out := make([]Provider, len(providers))
	for i, p := range providers {
		out[i] = p.clone()
	}
	return out
}

// Names lists the --provider values.
func Names() []string {
	var n []string
	for _, p := range providers {
		n = append(n, p.Name)
	}
	return n
}

// ErrUnknownProvider is returned for a --provider that has no preset.
var ErrUnknownProvider = errors.New("unknown provider")

// Lookup returns the preset named name (case-insensitive; "icloud mail",
// "office365", "m365" and "microsoft" are accepted too).
func Lookup(name string) (Provider, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "google", "googlemail":
		n = "gmail"
	case "apple", "icloud mail", "me.com":
		n = "icloud"
	case "office365", "m365", "microsoft", "microsoft365", "hotmail", "live":
		n = "outlook"
	}
	for _, p := range providers {
		if p.Name == n {
			return p.clone(), nil
		}
	}
	return Provider{}, fmt.Errorf("%w %q; choose one of %s", ErrUnknownProvider, name, strings.Join(Names(), ", "))
}

// Guess returns the preset whose domains hold address's domain, or custom.
func Guess(address string) Provider {
	at := strings.LastIndexByte(address, '@')
	domain := strings.ToLower(strings.TrimSpace(address[at+1:]))
	for _, p := range providers {
		for _, d := range p.Domains {
			if domain == d || strings.HasSuffix(domain, "."+d) {
				return p.clone()
			}
		}
	}
	p, _ := Lookup(Custom)
	return p
}

// Apply writes the provider's servers and trusted ids into c. Custom leaves
// c as it is.
func (p Provider) Apply(c *mailbot.Config) {
	if p.Name == Custom || p.Unsupported != "" {
		return
	}
	imapUser, smtpUser := c.IMAP.Username, c.SMTP.Username
	c.IMAP, c.SMTP = p.IMAP, p.SMTP
	c.IMAP.Username, c.SMTP.Username = imapUser, smtpUser
	c.TrustedAuthservIDs = append([]string(nil), p.AuthservIDs...)
	c.TrustedHosts = append([]string(nil), p.TrustedHosts...)
}

func (p Provider) clone() Provider {
	p.AuthservIDs = append([]string(nil), p.AuthservIDs...)
	p.TrustedHosts = append([]string(nil), p.TrustedHosts...)
	p.Domains = append([]string(nil), p.Domains...)
	return p
}
