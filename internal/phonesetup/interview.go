package phonesetup

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// Question is one thing setup asks.
type Question struct {
	// Flag is the command-line flag that answers it instead.
	Flag string
	// Text is the question.
	Text string
	// Default is taken when the answer is empty.
	Default string
	// Optional questions may stay unanswered even without a terminal.
	Optional bool
}

// Prompter asks the person at the terminal, one question at a time.
type Prompter interface {
	// Ask returns the trimmed answer, or q.Default when it is empty.
	Ask(q Question) (string, error)
	// Secret asks without echo.
	Secret(q Question) (secrets.Password, error)
	// Say shows a paragraph.
	Say(text string)
	// Interactive is false when nothing can be asked (scripted setup): then
	// Ask returns the default, or an error naming the flag.
	Interactive() bool
}

// Given holds the flags given on the command line; their questions are not
// asked.
type Given map[string]bool

// The flags whose questions Interview asks.
const (
	FlagBotAddress = "bot-address"
	FlagProvider   = "provider"
	FlagIMAP       = "imap"
	FlagIMAPTLS    = "imap-tls"
	FlagSMTP       = "smtp"
	FlagSMTPTLS    = "smtp-tls"
	FlagAuthservID = "authserv-id"
	FlagUsername   = "username"
	FlagOwner      = "owner"
)

// ErrUnsupported is returned when the chosen provider cannot work yet.
var ErrUnsupported = errors.New("provider not supported")

// SeparateMailbox is why the bot should have a mailbox of its own.
const SeparateMailbox = "Give the bot a mailbox of its own (a new free account is fine), not yours: " +
	"the bot reads every message that arrives there and flags each one once handled, " +
	"so in your own mailbox it would mark your mail as read, and its password would open your mail."

// maxAttempts bounds how often one question is asked again after a bad answer.
const maxAttempts = 5

// Interview fills c by asking, one at a time, for every setting whose flag
// is not in given: the bot's address, the provider (whose preset fills the
// servers and trusted authserv-ids), the servers for a custom provider, the
// login name and the owner's addresses. provider is the --provider value
// ("" when not given). reapply writes the given flags into c again after a
// preset, so flags win over presets. It returns the chosen provider.
func Interview(p Prompter, c *mailbot.Config, given Given, provider string, reapply func(*mailbot.Config)) (Provider, error) {
	if reapply == nil {
		reapply = func(*mailbot.Config) {}
	}
	if p.Interactive() {
		p.Say("agentkit emails you when a job needs a person, and obeys replies that come from your own address and pass its checks. " +
			"It needs a mailbox to send from and read.\n" + SeparateMailbox)
	}

	if !given[FlagBotAddress] {
		err := ask(p, Question{Flag: FlagBotAddress, Text: "The bot's email address", Default: c.BotAddress}, func(a string) error {
			c.BotAddress = a
			return fieldProblem(*c, "bot_address")
		})
		if err != nil {
			return Provider{}, err
		}
	}

	var prov Provider
	if given[FlagProvider] || provider != "" {
		var err error
		if prov, err = Lookup(provider); err != nil {
			return Provider{}, err
		}
	} else {
		def := defaultProvider(*c)
		if p.Interactive() {
			p.Say(providerMenu())
		}
		err := ask(p, Question{Flag: FlagProvider, Text: "Which provider hosts the bot's mailbox (" + strings.Join(Names(), ", ") + ")", Default: def.Name}, func(a string) error {
			var err error
			prov, err = Lookup(a)
			return err
		})
		if err != nil {
			return Provider{}, err
		}
	}
	if prov.Unsupported != "" {
		p.Say(prov.Unsupported)
		return prov, fmt.Errorf("%w: %s needs OAuth2, which agentkit does not do yet; choose another provider for the bot's mailbox", ErrUnsupported, prov.Title)
	}
	if prov.Name != Custom && !samePreset(*c, prov) {
		prov.Apply(c)
	}
	reapply(c)
	if prov.Name != Custom {
		p.Say(fmt.Sprintf("%s: IMAP %s (%s TLS), SMTP %s (%s TLS); trusted authserv-ids %s.",
			prov.Title, c.IMAP.Addr(), c.IMAP.TLS, c.SMTP.Addr(), c.SMTP.TLS, strings.Join(c.TrustedAuthservIDs, ", ")))
	} else if err := askServers(p, c, given); err != nil {
		return prov, err
	}
	if prov.AppPasswords != "" {
		p.Say("The bot logs in with an app password, made at " + prov.AppPasswords + ".")
	}
	if prov.Note != "" {
		p.Say(prov.Note)
	}

	if !given[FlagUsername] {
		def := c.IMAP.Username
		if def == "" {
			def = c.BotAddress
		}
		err := ask(p, Question{Flag: FlagUsername, Text: "The login name for IMAP and SMTP", Default: def}, func(a string) error {
			if strings.ContainsAny(a, " \t\r\n") {
				return errors.New("a login name has no spaces")
			}
			c.IMAP.Username, c.SMTP.Username = a, a
			return nil
		})
		if err != nil {
			return prov, err
		}
	}

	if !given[FlagOwner] {
		err := ask(p, Question{Flag: FlagOwner, Text: "Your own address, the one you will reply from (several: separate with commas)", Default: strings.Join(c.OwnerAddresses, ", ")}, func(a string) error {
			c.OwnerAddresses = SplitList(a)
			return fieldProblem(*c, "owner_addresses")
		})
		if err != nil {
			return prov, err
		}
	}
	return prov, nil
}

// askServers asks for a custom provider's servers and trusted authserv-ids.
func askServers(p Prompter, c *mailbot.Config, given Given) error {
	domain := c.BotAddress[strings.LastIndexByte(c.BotAddress, '@')+1:]
	for _, srv := range []struct {
		name, flag, tlsFlag, field string
		s                          *mailbot.Server
		implicit, starttls         int
	}{
		{"IMAP", FlagIMAP, FlagIMAPTLS, "imap", &c.IMAP, 993, 143},
		{"SMTP", FlagSMTP, FlagSMTPTLS, "smtp", &c.SMTP, 465, 587},
	} {
		if !given[srv.flag] {
			def := strings.ToLower(srv.name) + "." + domain + ":" + strconv.Itoa(srv.implicit)
			if srv.s.Host != "" {
				def = net.JoinHostPort(srv.s.Host, strconv.Itoa(portOr(srv.s.Port, srv.implicit)))
			}
			err := ask(p, Question{Flag: srv.flag, Text: "The " + srv.name + " server, as host:port", Default: def}, func(a string) error {
				host, port, err := SplitHostPort(a, srv.implicit)
				if err != nil {
					return err
				}
				srv.s.Host, srv.s.Port = host, port
				return nil
			})
			if err != nil {
				return err
			}
		}
		if !given[srv.tlsFlag] {
			// The usual ports say their mode; on others keep what is set.
			def := string(mailbot.TLSImplicit)
			switch {
			case srv.s.Port == srv.starttls || srv.s.Port == 25:
				def = string(mailbot.TLSStartTLS)
			case srv.s.Port != srv.implicit && srv.s.TLS != "":
				def = string(srv.s.TLS)
			}
			err := ask(p, Question{Flag: srv.tlsFlag, Text: "How " + srv.name + " is protected: implicit (TLS from the start), starttls, or none (loopback only)", Default: def}, func(a string) error {
				srv.s.TLS = mailbot.TLSMode(strings.ToLower(a))
				return fieldProblem(*c, srv.field)
			})
			if err != nil {
				return err
			}
		}
	}
	if !given[FlagAuthservID] {
		if p.Interactive() {
			p.Say("An authserv-id is the name your provider writes first in the Authentication-Results header it adds to the mail it receives " +
				"(Gmail writes mx.google.com). Trusting it lets the bot accept your reply on the provider's word that it passed DKIM or SPF; " +
				"without one the bot accepts only replies whose DKIM signature it verifies itself. " +
				"Not sure? Leave it blank: agentkit phone test --wait shows the one your provider stamps.")
		}
		err := ask(p, Question{Flag: FlagAuthservID, Text: "Trusted authserv-ids, separated with commas (exact names or *.domain; blank for none)", Default: strings.Join(c.TrustedAuthservIDs, ", "), Optional: true}, func(a string) error {
			c.TrustedAuthservIDs = SplitList(a)
			return fieldProblem(*c, "trusted_authserv_ids")
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ask asks q until check accepts the answer. Without a terminal a bad
// answer is an error at once.
func ask(p Prompter, q Question, check func(string) error) error {
	for attempt := 1; ; attempt++ {
		a, err := p.Ask(q)
		if err != nil {
			return err
		}
		err = check(a)
		if err == nil {
			return nil
		}
		if !p.Interactive() {
			return fmt.Errorf("--%s: %w", q.Flag, err)
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%s: %w", q.Text, err)
		}
		p.Say("That will not work: " + err.Error())
		q.Default = ""
	}
}

// fieldProblem validates a copy of c and returns the problem with the
// fields under prefix, ignoring the others (which may not be asked yet).
func fieldProblem(c mailbot.Config, prefix string) error {
	c.OwnerAddresses = append([]string(nil), c.OwnerAddresses...)
	c.TrustedAuthservIDs = append([]string(nil), c.TrustedAuthservIDs...)
	c.TrustedHosts = append([]string(nil), c.TrustedHosts...)
	// Fill what is not asked yet with stand-ins, so Validate reaches prefix.
	if prefix != "bot_address" && c.BotAddress == "" {
		c.BotAddress = "bot@example.invalid"
	}
	if prefix != "owner_addresses" && len(c.OwnerAddresses) == 0 {
		c.OwnerAddresses = []string{"owner@example.invalid"}
	}
	for _, s := range []*mailbot.Server{&c.IMAP, &c.SMTP} {
		if s.Host == "" {
			s.Host = "localhost"
		}
		if s.TLS == "" {
			s.TLS = mailbot.TLSImplicit
		}
	}
	err := c.Validate()
	var fe *mailbot.FieldError
	if errors.As(err, &fe) {
		if fe.Field == prefix || strings.HasPrefix(fe.Field, prefix+".") || strings.HasPrefix(fe.Field, prefix+"[") {
			return errors.New(fe.Problem)
		}
	}
	return nil
}

// defaultProvider is the preset the current settings use, or the one the
// bot's address suggests.
func defaultProvider(c mailbot.Config) Provider {
	if c.IMAP.Host != "" {
		for _, p := range providers {
			if p.IMAP.Host != "" && strings.EqualFold(p.IMAP.Host, c.IMAP.Host) {
				return p.clone()
			}
		}
		p, _ := Lookup(Custom)
		return p
	}
	return Guess(c.BotAddress)
}

// samePreset reports whether c already uses p's servers, so re-running setup
// keeps changes made to phone.yaml by hand (an extra authserv-id, a port).
func samePreset(c mailbot.Config, p Provider) bool {
	return c.IMAP.Host != "" && strings.EqualFold(c.IMAP.Host, p.IMAP.Host) && strings.EqualFold(c.SMTP.Host, p.SMTP.Host)
}

func providerMenu() string {
	var b strings.Builder
	b.WriteString("Providers with presets:")
	for _, p := range providers {
		switch {
		case p.Unsupported != "":
			fmt.Fprintf(&b, "\n  %-9s %s: not yet (needs OAuth2)", p.Name, p.Title)
		case p.Name == Custom:
			fmt.Fprintf(&b, "\n  %-9s %s: you give the servers", p.Name, p.Title)
		default:
			fmt.Fprintf(&b, "\n  %-9s %s: app passwords at %s", p.Name, p.Title, p.AppPasswords)
		}
	}
	return b.String()
}
