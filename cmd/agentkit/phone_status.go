package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

type phoneStatusOptions struct {
	ios  *ioStreams
	deps phoneDeps
	JSON bool
}

func newCmdPhoneStatus(ios *ioStreams, runF func(*phoneStatusOptions) error) *cobra.Command {
	opts := &phoneStatusOptions{ios: ios, deps: defaultPhoneDeps()}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the phone settings, where the password is, the outbox and the mailbox",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return phoneStatusRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// phoneStatus is what agentkit phone status shows.
type phoneStatus struct {
	Enabled    bool                   `json:"enabled"`
	Configured bool                   `json:"configured"`
	ConfigPath string                 `json:"config_path"`
	ConfigErr  string                 `json:"config_error,omitempty"`
	Config     *mailbot.Config        `json:"-"`
	Settings   *phoneSettings         `json:"settings,omitempty"`
	Password   string                 `json:"password"`
	Outbox     mailbot.OutboxSummary  `json:"outbox"`
	Mailboxes  []mailbot.MailboxState `json:"mailboxes"`
}

func phoneStatusRun(ctx context.Context, opts *phoneStatusOptions) error {
	ios := opts.ios
	home, err := ios.home()
	if err != nil {
		return err
	}
	st := phoneStatus{ConfigPath: mailbot.ConfigPath(home), Mailboxes: []mailbot.MailboxState{}}
	if c, err := loadPhoneConfig(home); err == nil {
		st.Configured, st.Config, st.Settings = true, &c, settingsOf(&c)
	} else {
		st.ConfigErr = err.Error()
	}
	st.Password = passwordState(passwordChain(ios, opts.deps, home))

	s, db, err := ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if st.Enabled, err = s.PhoneEnabled(ctx); err != nil {
		return err
	}
	if st.Outbox, err = mailbot.ReadOutbox(ctx, db, 3); err != nil {
		return err
	}
	if mb, err := mailbot.MailboxStates(ctx, db); err != nil {
		return err
	} else if mb != nil {
		st.Mailboxes = mb
	}
	if opts.JSON {
		return writeJSON(ios, st)
	}
	return writePhoneStatus(ios, st)
}

// passwordState says whether and where the password is, never what it is.
func passwordState(chain secrets.Chain) string {
	_, store, err := chain.Find(secrets.Phone)
	switch {
	case err == nil:
		return "set, " + secrets.Where(store)
	case store != nil: // found but refused, like a phone.env others can read
		return "cannot be used: " + err.Error()
	}
	return "missing: run agentkit phone setup, or set " + secrets.EnvPhonePassword
}

func writePhoneStatus(ios *ioStreams, st phoneStatus) error {
	w := ios.Out
	now := ios.now()
	switch {
	case st.Enabled:
		fmt.Fprintln(w, "Phone channel: on")
	default:
		fmt.Fprintln(w, "Phone channel: off (problems are not emailed; agentkit phone enable turns it on)")
	}
	if !st.Configured {
		fmt.Fprintf(w, "Settings: %s\n", st.ConfigErr)
	} else {
		c := st.Config
		fmt.Fprintf(w, "Settings: %s\n", st.ConfigPath)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  bot address\t%s\n", c.BotAddress)
		fmt.Fprintf(tw, "  owner\t%s\n", strings.Join(c.OwnerAddresses, ", "))
		fmt.Fprintf(tw, "  IMAP\t%s, %s TLS, login %s\n", c.IMAP.Addr(), c.IMAP.TLS, c.IMAP.Username)
		fmt.Fprintf(tw, "  SMTP\t%s, %s TLS, login %s\n", c.SMTP.Addr(), c.SMTP.TLS, c.SMTP.Username)
		fmt.Fprintf(tw, "  trusted authserv-ids\t%s\n", listOr(c.TrustedAuthservIDs, "none (only the bot's own DKIM check)"))
		if len(c.TrustedHosts) > 0 {
			fmt.Fprintf(tw, "  trusted hosts\t%s\n", strings.Join(c.TrustedHosts, ", "))
		}
		spf := "accepted (aligned)"
		if !c.AcceptSPFOnly {
			spf = "not enough: DKIM is needed"
		}
		fmt.Fprintf(tw, "  SPF-only passes\t%s\n", spf)
		fmt.Fprintf(tw, "  password\t%s\n", st.Password)
		tw.Flush()
	}
	if !st.Configured {
		fmt.Fprintf(w, "  password  %s\n", st.Password)
	}

	o := st.Outbox
	fmt.Fprintf(w, "Outbox: %d waiting, %d sent, %d failed", o.Waiting, o.Sent, o.Failed)
	if o.Held > 0 {
		fmt.Fprintf(w, ", %d held (agentkit phone send-pending sends them)", o.Held)
	}
	fmt.Fprintln(w)
	for _, e := range o.Entries {
		what := string(e.Kind)
		if e.Code != "" {
			what += " " + string(e.Code)
		}
		switch e.State {
		case "failed":
			fmt.Fprintf(w, "  failed  %s: %s\n", what, e.LastError)
		case "waiting":
			line := fmt.Sprintf("  waiting %s since %s", what, age(now.Sub(e.CreatedAt)))
			if e.Attempts > 0 {
				line += fmt.Sprintf(", %d %s", e.Attempts, plural(e.Attempts, "attempt", "attempts"))
				if e.LastError != "" {
					line += ": " + e.LastError
				}
			}
			fmt.Fprintln(w, line)
		case "sent":
			fmt.Fprintf(w, "  sent    %s %s ago\n", what, age(now.Sub(e.SentAt)))
		}
	}

	if len(st.Mailboxes) == 0 {
		fmt.Fprintln(w, "Mailbox: not reached yet (the service reads it once started: agentkit service start)")
	}
	poll := time.Minute
	if st.Config != nil {
		poll = st.Config.PollInterval.D()
	}
	for _, m := range st.Mailboxes {
		fmt.Fprintf(w, "%s; %d messages read\n", mailboxLine(m, now, poll), m.ProcessedMsgs)
	}
	return nil
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ", ")
}

// phoneSettings is phone.yaml as agentkit phone status --json shows it.
type phoneSettings struct {
	BotAddress         string         `json:"bot_address"`
	OwnerAddresses     []string       `json:"owner_addresses"`
	IMAP               mailbot.Server `json:"imap"`
	SMTP               mailbot.Server `json:"smtp"`
	TrustedAuthservIDs []string       `json:"trusted_authserv_ids"`
	TrustedHosts       []string       `json:"trusted_hosts"`
	AcceptSPFOnly      bool           `json:"accept_spf_only"`
	PollInterval       string         `json:"poll_interval"`
	MaxAge             string         `json:"max_age"`
}

func settingsOf(c *mailbot.Config) *phoneSettings {
	return &phoneSettings{
		BotAddress: c.BotAddress, OwnerAddresses: c.OwnerAddresses, IMAP: c.IMAP, SMTP: c.SMTP,
		TrustedAuthservIDs: nonNil(c.TrustedAuthservIDs), TrustedHosts: nonNil(c.HostPatterns()),
		AcceptSPFOnly: c.AcceptSPFOnly, PollInterval: c.PollInterval.D().String(), MaxAge: c.MaxAge.D().String(),
	}
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// mailboxLine says when the bot last reached a mailbox and how it watches it;
// poll is the interval used where the server has no IDLE (0: not known).
func mailboxLine(m mailbot.MailboxState, now time.Time, poll time.Duration) string {
	line := fmt.Sprintf("Mailbox %s %s: ", m.Account, m.Mailbox)
	if m.LastReached.IsZero() {
		line += "never reached"
	} else {
		line += "last reached " + age(now.Sub(m.LastReached)) + " ago"
	}
	switch {
	case m.Unreachable:
		line += fmt.Sprintf("; unreachable since %s ago: %s", age(now.Sub(m.DownSince)), m.LastError)
	case m.LastReached.IsZero():
	case m.IdleInUse:
		line += "; IDLE in use"
	case poll > 0:
		line += "; no IDLE, checked every " + poll.String()
	default:
		line += "; no IDLE, polling"
	}
	return line
}
