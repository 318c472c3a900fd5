package mailbot

import (
	"fmt"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Validate checks the settings, fills in derived defaults (ports, usernames,
// trusted hosts) and lower-cases the patterns.
func (c *Config) Validate() error {
	if c.BotAddress == "" {
		return fieldErr("bot_address", "is missing; write the address the bot reads and sends from")
	}
	if err := checkAddress(c.BotAddress); err != nil {
		return fieldErr("bot_address", "%v", err)
	}
	if len(c.OwnerAddresses) == 0 {
		return fieldErr("owner_addresses", "is empty; list the address(es) you reply from")
	}
	for i, o := range c.OwnerAddresses {
		field := fmt.Sprintf("owner_addresses[%d]", i)
		if err := checkAddress(o); err != nil {
			return fieldErr(field, "%v", err)
		}
		if asciiLower(o) == asciiLower(c.BotAddress) {
			return fieldErr(field, "%q is the bot's own address; the owner must reply from a different mailbox, or the bot would obey its own mail", o)
		}
		for _, prev := range c.OwnerAddresses[:i] {
			if asciiLower(prev) == asciiLower(o) {
				return fieldErr(field, "%q is listed twice", o)
			}
		}
	}
	if err := c.IMAP.validate("imap", 993, 143, 143); err != nil {
		return err
	}
	if err := c.SMTP.validate("smtp", 465, 587, 25); err != nil {
		return err
	}
	if c.IMAP.Username == "" {
		c.IMAP.Username = c.BotAddress
	}
	if c.SMTP.Username == "" {
		c.SMTP.Username = c.BotAddress
	}
	for i, p := range c.TrustedAuthservIDs {
		field := fmt.Sprintf("trusted_authserv_ids[%d]", i)
		lp, err := checkPattern(p)
		if err != nil {
			return fieldErr(field, "%v", err)
		}
		c.TrustedAuthservIDs[i] = lp
	}
	for i, p := range c.TrustedHosts {
		field := fmt.Sprintf("trusted_hosts[%d]", i)
		lp, err := checkPattern(p)
		if err != nil {
			return fieldErr(field, "%v", err)
		}
		c.TrustedHosts[i] = lp
	}
	if c.DNSServer != "" {
		if _, err := dnsServerAddr(c.DNSServer); err != nil {
			return fieldErr("dns_server", "%v", err)
		}
	}
	if c.MaxMessageBytes <= 0 || c.MaxMessageBytes > 64<<20 {
		return fieldErr("max_message_bytes", "is %d; use a size between 1 and 67108864 bytes (default 1048576)", c.MaxMessageBytes)
	}
	if c.MaxAge <= 0 {
		return fieldErr("max_age", "must be more than zero, like 7d")
	}
	if c.ControlMaxAge <= 0 {
		return fieldErr("control_max_age", "must be more than zero, like 1h")
	}
	if c.PollInterval.D() < 5*time.Second {
		return fieldErr("poll_interval", "is %s; use 5s or more, like 1m", c.PollInterval.D())
	}
	if c.AnswersPerHour < 1 {
		return fieldErr("answers_per_hour", "is %d; use 1 or more (default 10)", c.AnswersPerHour)
	}
	if c.ProcessedKeyword == "" {
		c.ProcessedKeyword = DefaultProcessedKeyword
	}
	if !isIMAPAtom(c.ProcessedKeyword) || strings.HasPrefix(c.ProcessedKeyword, `\`) {
		return fieldErr("processed_keyword", "%q is not an IMAP keyword; use letters, digits, - and _ (default %s)", c.ProcessedKeyword, DefaultProcessedKeyword)
	}
	return nil
}

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

func (s *Server) validate(block string, implicitPort, starttlsPort, nonePort int) error {
	if s.Host == "" {
		return fieldErr(block+".host", "is missing; write the %s server's host name", strings.ToUpper(block))
	}
	switch s.TLS {
	case "":
		s.TLS = TLSImplicit
	case TLSImplicit, TLSStartTLS:
	case TLSNone:
		if !isLoopbackHost(s.Host) {
			return fieldErr(block+".tls", "none sends the password in clear text and is allowed only to a loopback address (127.0.0.1, ::1, localhost), not %q; use implicit or starttls", s.Host)
		}
	default:
		return fieldErr(block+".tls", "is %q; use implicit, starttls or none", s.TLS)
	}
	if s.Port == 0 {
		switch s.TLS {
		case TLSImplicit:
			s.Port = implicitPort
		case TLSStartTLS:
			s.Port = starttlsPort
		default:
			s.Port = nonePort
		}
	}
	if s.Port < 1 || s.Port > 65535 {
		return fieldErr(block+".port", "is %d; use a port between 1 and 65535", s.Port)
	}
	if s.CAFile != "" {
		if !filepath.IsAbs(s.CAFile) {
			return fieldErr(block+".ca_file", "%q is not an absolute path; write the full path of the PEM file", s.CAFile)
		}
		if _, err := os.Stat(s.CAFile); err != nil {
			return fieldErr(block+".ca_file", "cannot be read: %v", err)
		}
	}
	return nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

func checkAddress(a string) error {
	addr, err := mail.ParseAddress(a)
	if err != nil || addr.Name != "" || addr.Address != strings.TrimSpace(a) {
		return fmt.Errorf("%q is not a plain email address; write it like name@example.com, without a display name", a)
	}
	if !strings.Contains(addr.Address, "@") {
		return fmt.Errorf("%q has no domain", a)
	}
	return nil
}

// checkPattern validates an exact host name or a "*.suffix" pattern and
// returns it lower-cased.
func checkPattern(p string) (string, error) {
	lp := strings.ToLower(strings.TrimSpace(p))
	name := strings.TrimPrefix(lp, "*.")
	if name == "" || !isHostName(name) || strings.Contains(name, "*") {
		return "", fmt.Errorf("%q is not a host name or *.suffix pattern (like mx.google.com or *.messagingengine.com)", p)
	}
	if strings.HasPrefix(lp, "*.") && !strings.Contains(name, ".") {
		return "", fmt.Errorf("%q would trust a whole top-level domain; name the provider's domain, like *.messagingengine.com", p)
	}
	return lp, nil
}

func isHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func dnsServerAddr(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), "53"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("%q has a bad port; write host or host:port, like 1.1.1.1 or 127.0.0.1:5353", s)
	}
	if net.ParseIP(host) == nil && !isHostName(strings.ToLower(host)) {
		return "", fmt.Errorf("%q is not a host; write host or host:port, like 1.1.1.1 or 127.0.0.1:5353", s)
	}
	return net.JoinHostPort(host, port), nil
}

func isIMAPAtom(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`(){%*"\]`, c) >= 0 {
			return false
		}
	}
	return true
}

// asciiLower lower-cases ASCII letters only: Unicode case folding would let
// K (Kelvin sign) equal k.
func asciiLower(s string) string {
	b := []byte(strings.TrimSpace(s))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
