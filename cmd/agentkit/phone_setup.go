package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/phonesetup"
	"github.com/agentkit/agentkit/mailbot"
)

type phoneSetupOptions struct {
	ios  *ioStreams
	deps phoneDeps

	Provider      string
	BotAddress    string
	Owners        []string
	IMAP, SMTP    string
	IMAPTLS       string
	SMTPTLS       string
	IMAPCA        string
	SMTPCA        string
	Username      string
	AuthservIDs   []string
	TrustedHosts  []string
	PasswordStdin bool
	NoVerify      bool
	NoInput       bool
	WriteEnv      bool

	// given holds the flags set on the command line.
	given phonesetup.Given
}

func newCmdPhoneSetup(ios *ioStreams, runF func(*phoneSetupOptions) error) *cobra.Command {
	opts := &phoneSetupOptions{ios: ios, deps: defaultPhoneDeps()}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Set up the phone channel: the bot's mailbox, your address, the password; verified before saving",
		Long: `Set up the phone channel, one question at a time (each has a default in
brackets). Every answer can be given as a flag instead; with --no-input (or
--password-stdin) nothing is asked and unanswered settings take their defaults.

Before saving, setup checks DNS, TCP, TLS, the IMAP login (and whether IDLE is
offered) and the SMTP login; on any failure it says what to change and saves
nothing, unless --no-verify. It writes $AGENTKIT_HOME/phone.yaml (mode 0600,
never the password) and turns the phone channel on.

The password: on Windows it is kept in the Credential Manager. Elsewhere
agentkit reads AGENTKIT_PHONE_PASSWORD, or $AGENTKIT_HOME/phone.env (mode
0600), which setup writes when asked (--write-env).`,
		Example: `  agentkit phone setup
  printf '%s' "$APP_PASSWORD" | agentkit phone setup --provider gmail \
      --bot-address agentkit.bot@gmail.com --owner me@example.org --password-stdin --write-env`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.given = phonesetup.Given{}
			for _, name := range setupFlagNames {
				opts.given[name] = cmd.Flags().Changed(name)
			}
			if runF != nil {
				return runF(opts)
			}
			return phoneSetupRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Provider, phonesetup.FlagProvider, "", "the bot mailbox's provider: "+strings.Join(phonesetup.Names(), ", "))
	f.StringVar(&opts.BotAddress, phonesetup.FlagBotAddress, "", "the bot's email address (a mailbox of its own)")
	f.StringSliceVar(&opts.Owners, phonesetup.FlagOwner, nil, "your address, the one you reply from (repeat or separate with commas for several)")
	f.StringVar(&opts.IMAP, phonesetup.FlagIMAP, "", "the IMAP server as host:port")
	f.StringVar(&opts.IMAPTLS, phonesetup.FlagIMAPTLS, "", "implicit, starttls or none (none only to a loopback address)")
	f.StringVar(&opts.IMAPCA, "imap-ca", "", "a PEM file of CA certificates to trust for IMAP (a private server)")
	f.StringVar(&opts.SMTP, phonesetup.FlagSMTP, "", "the SMTP server as host:port")
	f.StringVar(&opts.SMTPTLS, phonesetup.FlagSMTPTLS, "", "implicit, starttls or none (none only to a loopback address)")
	f.StringVar(&opts.SMTPCA, "smtp-ca", "", "a PEM file of CA certificates to trust for SMTP (a private server)")
	f.StringVar(&opts.Username, phonesetup.FlagUsername, "", "the login name for IMAP and SMTP (default: the bot's address)")
	f.StringSliceVar(&opts.AuthservIDs, phonesetup.FlagAuthservID, nil, "a trusted authserv-id (exact or *.domain; repeat for several)")
	f.StringSliceVar(&opts.TrustedHosts, "trusted-host", nil, "a trusted receiving host for the Received rule (default: the authserv-ids)")
	f.BoolVar(&opts.PasswordStdin, "password-stdin", false, "read the password from standard input (implies --no-input)")
	f.BoolVar(&opts.NoVerify, "no-verify", false, "save without checking the servers and the login")
	f.BoolVar(&opts.NoInput, "no-input", false, "ask nothing: take flags and defaults")
	f.BoolVar(&opts.WriteEnv, "write-env", false, "outside Windows: write the password to $AGENTKIT_HOME/phone.env (mode 0600) for the background service")
	return cmd
}

// setupFlagNames are the flags whose presence changes what setup asks.
var setupFlagNames = []string{
	phonesetup.FlagProvider, phonesetup.FlagBotAddress, phonesetup.FlagOwner,
	phonesetup.FlagIMAP, phonesetup.FlagIMAPTLS, "imap-ca", phonesetup.FlagSMTP, phonesetup.FlagSMTPTLS, "smtp-ca",
	phonesetup.FlagUsername, phonesetup.FlagAuthservID, "trusted-host", "write-env",
}

func phoneSetupRun(ctx context.Context, opts *phoneSetupOptions) error {
	ios := opts.ios
	home, err := ios.home()
	if err != nil {
		return err
	}
	path := mailbot.ConfigPath(home)
	interactive := !opts.NoInput && !opts.PasswordStdin
	prompter := newLinePrompter(ios.In, ios.Out, interactive)

	cfg := mailbot.DefaultConfig()
	if old, err := mailbot.LoadConfig(path); err == nil {
		cfg = old
		if interactive {
			prompter.Say(fmt.Sprintf("Changing the settings in %s; press Enter to keep each one.", path))
		}
	} else if phoneConfigured(home) {
		fmt.Fprintf(ios.Err, "agentkit: starting over, because the existing settings cannot be read: %v\n", err)
	}
	if err := opts.applyFlags(&cfg); err != nil {
		return err
	}
	prov, err := phonesetup.Interview(prompter, &cfg, opts.given, opts.Provider, func(c *mailbot.Config) { _ = opts.applyFlags(c) })
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		var fe *mailbot.FieldError
		if errors.As(err, &fe) {
			return usageError{msg: flagOfField(fe.Field) + ": " + fe.Problem}
		}
		return fmt.Errorf("phone settings: %w", err)
	}
	if len(cfg.TrustedAuthservIDs) == 0 {
		prompter.Say("No authserv-id is trusted: only replies whose DKIM signature the bot verifies itself will be obeyed. agentkit phone test --wait shows the authserv-id your provider stamps.")
	}

	chain := passwordChain(ios, opts.deps, home)
	pw, src, err := opts.password(prompter, chain, prov)
	if err != nil {
		return err
	}

	if opts.NoVerify {
		fmt.Fprintln(ios.Out, "Not verified (--no-verify): run agentkit phone test once the servers are reachable.")
	} else {
		fmt.Fprintln(ios.Out, "Checking the settings (nothing is sent):")
		v := &phonesetup.Verifier{Resolver: opts.deps.Resolver, LoginHint: prov.AppPasswords, Report: func(c phonesetup.Check) { printCheck(ios.Out, c) }}
		if err := v.Verify(ctx, &cfg, pw); err != nil {
			var f *phonesetup.Failure
			if errors.As(err, &f) {
				return errors.New("nothing was saved: fix the setting above and run agentkit phone setup again, or save anyway with --no-verify")
			}
			return err
		}
	}

	// Keep the password, then the settings; if the settings cannot be
	// saved, put the password store back as it was.
	undo, where, err := opts.keepPassword(prompter, pw, src, home)
	if err != nil {
		return err
	}
	if err := cfg.Save(path); err != nil {
		if uerr := undo(); uerr != nil {
			return fmt.Errorf("%w (and putting the password store back failed: %v)", err, uerr)
		}
		return err
	}
	fmt.Fprintf(ios.Out, "Saved %s (readable only by you; it never holds the password).\n", path)
	if where != "" {
		fmt.Fprintf(ios.Out, "The password is kept %s.\n", where)
	}

	s, db, err := ios.openStore(ctx)
	if err != nil {
		return fmt.Errorf("the settings are saved, but the phone channel could not be turned on (%w); run agentkit phone enable", err)
	}
	defer db.Close()
	if err := s.SetPhoneEnabled(ctx, true); err != nil {
		return fmt.Errorf("the settings are saved, but the phone channel could not be turned on (%w); run agentkit phone enable", err)
	}
	fmt.Fprintln(ios.Out, "The phone channel is on.")
	fmt.Fprintln(ios.Out, "Next: agentkit phone test --wait sends you a test email; reply to it from your phone to see that your replies will be obeyed.")
	return nil
}

// applyFlags writes the flags given on the command line into c.
func (opts *phoneSetupOptions) applyFlags(c *mailbot.Config) error {
	g := opts.given
	if g[phonesetup.FlagBotAddress] {
		c.BotAddress = strings.TrimSpace(opts.BotAddress)
	}
	if g[phonesetup.FlagOwner] {
		c.OwnerAddresses = phonesetup.SplitList(strings.Join(opts.Owners, ","))
	}
	for _, s := range []struct {
		flag, tlsFlag, caFlag string
		addr, tls, ca         string
		srv                   *mailbot.Server
	}{
		{phonesetup.FlagIMAP, phonesetup.FlagIMAPTLS, "imap-ca", opts.IMAP, opts.IMAPTLS, opts.IMAPCA, &c.IMAP},
		{phonesetup.FlagSMTP, phonesetup.FlagSMTPTLS, "smtp-ca", opts.SMTP, opts.SMTPTLS, opts.SMTPCA, &c.SMTP},
	} {
		if g[s.flag] {
			host, port, err := phonesetup.SplitHostPort(s.addr, 0)
			if err != nil {
				return usageError{msg: "--" + s.flag + ": " + err.Error()}
			}
			s.srv.Host, s.srv.Port = host, port
		}
		if g[s.tlsFlag] {
			s.srv.TLS = mailbot.TLSMode(strings.ToLower(strings.TrimSpace(s.tls)))
		}
		if g[s.caFlag] {
			abs, err := filepath.Abs(s.ca)
			if err != nil {
				return usageError{msg: "--" + s.caFlag + ": " + err.Error()}
			}
			s.srv.CAFile = abs
		}
	}
	if g[phonesetup.FlagUsername] {
		c.IMAP.Username, c.SMTP.Username = opts.Username, opts.Username
	}
	if g[phonesetup.FlagAuthservID] {
		c.TrustedAuthservIDs = phonesetup.SplitList(strings.Join(opts.AuthservIDs, ","))
	}
	if g["trusted-host"] {
		c.TrustedHosts = phonesetup.SplitList(strings.Join(opts.TrustedHosts, ","))
	}
	return nil
}

// flagOfField names the setup flag that sets a phone.yaml field.
func flagOfField(field string) string {
	name, _, _ := strings.Cut(field, "[")
	switch name {
	case "bot_address":
		return "--bot-address"
	case "owner_addresses":
		return "--owner"
	case "imap.host", "imap.port":
		return "--imap"
	case "smtp.host", "smtp.port":
		return "--smtp"
	case "imap.tls", "smtp.tls":
		return "--" + strings.Replace(name, ".", "-", 1)
	case "imap.ca_file", "smtp.ca_file":
		return "--" + name[:4] + "-ca"
	case "trusted_authserv_ids":
		return "--authserv-id"
	case "trusted_hosts":
		return "--trusted-host"
	}
	return "phone.yaml " + field
}

// printCheck prints one verification step as "  ✓ IMAP TLS    ...".
func printCheck(w io.Writer, c phonesetup.Check) {
	mark := "✓"
	if !c.OK {
		mark = "✗"
	}
	fmt.Fprintf(w, "  %s %-10s %s\n", mark, c.Server+" "+string(c.Step), c.Line)
}
