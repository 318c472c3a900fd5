// Package mailbot emails the owner one message per problem and obeys only the
// owner's authenticated replies: phone settings, reply parsing, verification
// and the command grammar (and, beside them, the outbox sender and the
// mailbox watcher).
package mailbot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Config is the schema of $AGENTKIT_HOME/phone.yaml. It never holds the
// password, which comes from the secrets package.
type Config struct {
	// BotAddress is the mailbox the bot sends from and reads.
	BotAddress string `yaml:"bot_address"`
	// OwnerAddresses are the addresses whose authenticated replies are obeyed;
	// mail goes to the first one.
	OwnerAddresses []string `yaml:"owner_addresses"`
	// IMAP is where replies are read.
	IMAP Server `yaml:"imap"`
	// SMTP is where mail is sent.
	SMTP Server `yaml:"smtp"`
	// TrustedAuthservIDs are the authserv-ids of the receiving provider whose
	// Authentication-Results headers count: exact names or "*.suffix".
	TrustedAuthservIDs []string `yaml:"trusted_authserv_ids,omitempty"`
	// TrustedHosts name the provider's receiving hosts in Received headers
	// (exact or "*.suffix"); empty means the same patterns as
	// TrustedAuthservIDs.
	TrustedHosts []string `yaml:"trusted_hosts,omitempty"`
	// DNSServer is "host[:port]" of the resolver used for DKIM key lookups;
	// empty means the system resolver.
	DNSServer string `yaml:"dns_server,omitempty"`
	// AcceptSPFOnly lets a provider's aligned SPF (or DMARC) pass authenticate a
	// reply without any DKIM pass.
	AcceptSPFOnly bool `yaml:"accept_spf_only"`
	// MaxMessageBytes is the largest message read; bigger ones are refused
	// without being downloaded.
	MaxMessageBytes int64 `yaml:"max_message_bytes"`
	// MaxAge is the oldest reply obeyed.
	MaxAge Duration `yaml:"max_age"`
	// ControlMaxAge is the oldest pause or resume without a code obeyed.
	ControlMaxAge Duration `yaml:"control_max_age"`
	// PollInterval is how often the mailbox is checked when IDLE is missing.
	PollInterval Duration `yaml:"poll_interval"`
	// AnswersPerHour caps automatic answers and confirmations, so two bots
	// can never loop; problem emails are not capped.
	AnswersPerHour int `yaml:"answers_per_hour"`
	// ProcessedKeyword is the IMAP keyword set (with \Seen) on a message once
	// its decision is stored.
	ProcessedKeyword string `yaml:"processed_keyword"`
	// ProcessedFolder, when set, is where processed messages are moved instead.
	ProcessedFolder string `yaml:"processed_folder,omitempty"`
}

// Server is one mail server connection.
type Server struct {
	Host string `yaml:"host"`
	// Port defaults by TLS mode: IMAP 993/143, SMTP 465/587 (25 for none).
	Port int `yaml:"port,omitempty"`
	// TLS is implicit, starttls or none (none only to a loopback address).
	TLS TLSMode `yaml:"tls"`
	// CAFile is an absolute path to PEM certificates trusted in addition to
	// the system's (a private or test server).
	CAFile string `yaml:"ca_file,omitempty"`
	// Username defaults to the bot address.
	Username string `yaml:"username,omitempty"`
}

// TLSMode says how a connection is protected.
type TLSMode string

// The TLS modes.
const (
	TLSImplicit TLSMode = "implicit"
	TLSStartTLS TLSMode = "starttls"
	TLSNone     TLSMode = "none"
)

// Defaults of phone.yaml.
const (
	DefaultMaxMessageBytes  = 1 << 20
	DefaultMaxAge           = 7 * 24 * time.Hour
	DefaultControlMaxAge    = time.Hour
	DefaultPollInterval     = time.Minute
	DefaultAnswersPerHour   = 10
	DefaultProcessedKeyword = "agentkit-processed"
)

// DefaultConfig returns the settings a phone.yaml falls back to for each
// field it leaves out.
func DefaultConfig() Config {
	return Config{
		IMAP:             Server{TLS: TLSImplicit},
		SMTP:             Server{TLS: TLSImplicit},
		AcceptSPFOnly:    true,
		MaxMessageBytes:  DefaultMaxMessageBytes,
		MaxAge:           Duration(DefaultMaxAge),
		ControlMaxAge:    Duration(DefaultControlMaxAge),
		PollInterval:     Duration(DefaultPollInterval),
		AnswersPerHour:   DefaultAnswersPerHour,
		ProcessedKeyword: DefaultProcessedKeyword,
	}
}

// Duration is a time.Duration written in YAML as "7d", "1h", "90s".
type Duration time.Duration

// UnmarshalText parses a Go duration, or a whole number of days like "7d".
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	var v time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return fmt.Errorf("%q is not a duration; write it like 7d, 12h or 90s", s)
		}
		v = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if v, err = time.ParseDuration(s); err != nil {
			return fmt.Errorf("%q is not a duration; write it like 7d, 12h or 90s", s)
		}
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes whole days as "7d" and other durations in Go syntax.
func (d Duration) MarshalText() ([]byte, error) {
	v := time.Duration(d)
	if v != 0 && v%(24*time.Hour) == 0 {
		return []byte(strconv.Itoa(int(v/(24*time.Hour))) + "d"), nil
	}
	return []byte(v.String()), nil
}

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ConfigPath is where phone.yaml lives under an agentkit home directory.
func ConfigPath(home string) string { return filepath.Join(home, "phone.yaml") }

// LoadConfig reads and validates phone.yaml. Errors name the file, line and
// field, and say what to write instead.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Config{}, fmt.Errorf("reading phone settings: %s does not exist; run agentkit phone setup", path)
		}
		return Config{}, fmt.Errorf("reading phone settings: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig decodes and validates phone.yaml content; name is used in errors.
func ParseConfig(name string, data []byte) (Config, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, true))
	}
	if line, field, ok := findPasswordKey(file); ok {
		return Config{}, fmt.Errorf("%s:%d: %s: phone.yaml never holds the password; remove it and keep the password in %s or the system's credential store (agentkit phone setup)", name, line, field, "AGENTKIT_PHONE_PASSWORD")
	}
	// Custom unmarshalers lose the position, so durations are checked here
	// first, where the line is known.
	for _, field := range []string{"max_age", "control_max_age", "poll_interval"} {
		if n := fieldNode(file, field); n != nil {
			var d Duration
			if err := d.UnmarshalText([]byte(strings.Trim(n.String(), `"'`))); err != nil {
				return Config{}, fmt.Errorf("%s:%d: %s: %w", name, n.GetToken().Position.Line, field, err)
			}
		}
	}
	c := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField())
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, true))
	}
	if err := c.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			if line := fieldLine(file, fe.Field); line > 0 {
				return Config{}, fmt.Errorf("%s:%d: %w", name, line, err)
			}
		}
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// FieldError is a setting with a value that cannot work.
type FieldError struct {
	// Field is the setting's path, like "imap.tls" or "owner_addresses[1]".
	Field string
	// Problem says what is wrong and what to write instead.
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

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

// AuthservPatterns returns the trusted authserv-id patterns.
func (c *Config) AuthservPatterns() []string { return c.TrustedAuthservIDs }

// HostPatterns returns the trusted host patterns for the inbound Received
// rule: TrustedHosts, or the authserv-id patterns when none are set.
func (c *Config) HostPatterns() []string {
	if len(c.TrustedHosts) > 0 {
		return c.TrustedHosts
	}
	return c.TrustedAuthservIDs
}

// IsOwner reports whether addr is one of the owner addresses (ASCII
// case-insensitive, so no Unicode folding can make two addresses equal).
func (c *Config) IsOwner(addr string) bool {
	a := asciiLower(addr)
	for _, o := range c.OwnerAddresses {
		if asciiLower(o) == a {
			return true
		}
	}
	return false
}

// DNSServerAddr returns dns_server as host:port, or "" for the system resolver.
func (c *Config) DNSServerAddr() string {
	a, _ := dnsServerAddr(c.DNSServer)
	return a
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

// Addr returns host:port.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

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

// Marshal renders the settings as YAML.
func (c Config) Marshal() ([]byte, error) {
	return yaml.MarshalWithOptions(c, yaml.IndentSequence(true))
}

// Save validates the settings and writes them to path with mode 0600, through
// a temporary file and a rename so a crash leaves the old file or the new one.
func (c Config) Save(path string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("phone settings not saved: %w", err)
	}
	data, err := c.Marshal()
	if err != nil {
		return fmt.Errorf("encoding phone settings: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving phone settings: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".phone.yaml.*")
	if err != nil {
		return fmt.Errorf("saving phone settings: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("saving phone settings: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("saving phone settings: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving phone settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving phone settings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving phone settings: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// fieldLine finds the line of a field path like "imap.tls" or
// "owner_addresses[1]" in the parsed file; 0 when absent.
func fieldLine(file *ast.File, field string) int {
	if n := fieldNode(file, field); n != nil {
		return n.GetToken().Position.Line
	}
	return 0
}

func fieldNode(file *ast.File, field string) ast.Node {
	p, err := yaml.PathString("$." + field)
	if err != nil {
		return nil
	}
	n, err := p.FilterFile(file)
	if err != nil || n == nil || n.GetToken() == nil {
		return nil
	}
	return n
}

// findPasswordKey reports the first mapping key that looks like a password.
func findPasswordKey(file *ast.File) (line int, field string, ok bool) {
	var walk func(n ast.Node, prefix string) bool
	walk = func(n ast.Node, prefix string) bool {
		switch v := n.(type) {
		case *ast.MappingNode:
			for _, mv := range v.Values {
				if walk(mv, prefix) {
					return true
				}
			}
		case *ast.MappingValueNode:
			key := v.Key.String()
			k := strings.ToLower(key)
			if strings.Contains(k, "password") || k == "pass" || k == "secret" {
				line, field = v.Key.GetToken().Position.Line, prefix+key
				return true
			}
			return walk(v.Value, prefix+key+".")
		case *ast.DocumentNode:
			return v.Body != nil && walk(v.Body, prefix)
		}
		return false
	}
	for _, d := range file.Docs {
		if walk(d, "") {
			return line, field, true
		}
	}
	return 0, "", false
}
