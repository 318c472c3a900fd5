// Package mailbot emails the owner one message per problem and obeys only the
// owner's authenticated replies: phone settings, reply parsing, verification
// and the command grammar (and, beside them, the outbox sender and the
// mailbox watcher).
package mailbot

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/agentkit/agentkit/internal/yamlx"
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
	if err := yamlx.Decode(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, yamlx.Format(err))
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

// Addr returns host:port.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

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
