package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/phonesetup"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

func newCmdPhone(ios *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "phone",
		Short: "Set up, test and watch the phone channel: problems by email, answers by reply",
		Long: `The phone channel emails you one message per problem and obeys your reply when it
comes from your own address, passes DKIM or SPF, and carries the problem's code.
Set it up once at the desk with agentkit phone setup, then prove it with
agentkit phone test --wait. docs/phone.md explains every setting.`,
	}
	cmd.AddCommand(
		newCmdPhoneSetup(ios, nil),
		newCmdPhoneStatus(ios, nil),
		newCmdPhoneLog(ios, nil),
		newCmdPhoneCheck(ios, nil),
		newCmdPhoneTest(ios, nil),
		newCmdPhoneChannel(ios, false, nil),
		newCmdPhoneChannel(ios, true, nil),
		newCmdPhoneSendPending(ios, nil),
	)
	return cmd
}

// phoneDeps are what the phone commands reach outside the process, so tests
// can stand in for them.
type phoneDeps struct {
	// Keeper is where setup keeps the password (the Windows Credential
	// Manager); nil where the environment provides it.
	Keeper secrets.Writer
	// Resolver looks host names up for verification; nil means the system's.
	Resolver phonesetup.Resolver
}

func defaultPhoneDeps() phoneDeps {
	return phoneDeps{Keeper: secrets.Keeper()}
}

// home is $AGENTKIT_HOME.
func (ios *ioStreams) home() (string, error) {
	return state.Home(ios.getenv)
}

// passwordChain is where the phone password is looked for: the keeper
// (Windows), AGENTKIT_PHONE_PASSWORD (as this process sees it), and, where no
// keeper exists, $AGENTKIT_HOME/phone.env.
func passwordChain(ios *ioStreams, deps phoneDeps, home string) secrets.Chain {
	env := secrets.Env{Lookup: func(k string) (string, bool) {
		v := ios.getenv(k)
		return v, v != ""
	}}
	if deps.Keeper != nil {
		return secrets.Chain{deps.Keeper, env}
	}
	return secrets.Chain{env, &secrets.EnvFile{Path: secrets.EnvFilePath(home)}}
}

// loadPhoneConfig reads phone.yaml, saying how to create it when missing.
func loadPhoneConfig(home string) (mailbot.Config, error) {
	return mailbot.LoadConfig(mailbot.ConfigPath(home))
}

// phoneConfigured reports whether phone.yaml exists.
func phoneConfigured(home string) bool {
	_, err := os.Stat(mailbot.ConfigPath(home))
	return !errors.Is(err, fs.ErrNotExist)
}

// newCmdPhoneChannel is disable (on=false) or enable (on=true).
func newCmdPhoneChannel(ios *ioStreams, on bool, runF func(context.Context, bool) error) *cobra.Command {
	use, short := "disable", "Stop emailing problems; settings are kept and replies are no longer read"
	if on {
		use, short = "enable", "Start emailing problems again (those raised while disabled wait for send-pending)"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), on)
			}
			return phoneChannelRun(cmd.Context(), ios, on)
		},
	}
}

func phoneChannelRun(ctx context.Context, ios *ioStreams, on bool) error {
	home, err := ios.home()
	if err != nil {
		return err
	}
	if on {
		if _, err := loadPhoneConfig(home); err != nil {
			return fmt.Errorf("the phone channel cannot be turned on: %w", err)
		}
	}
	s, db, err := ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	was, err := s.PhoneEnabled(ctx)
	if err != nil {
		return err
	}
	if err := s.SetPhoneEnabled(ctx, on); err != nil {
		return err
	}
	box, err := mailbot.ReadOutbox(ctx, db, 0)
	if err != nil {
		return err
	}
	held := box.Held
	w := ios.Out
	switch {
	case on && was:
		fmt.Fprintln(w, "The phone channel was already on.")
	case on:
		fmt.Fprintln(w, "The phone channel is on: new problems are emailed and replies are read.")
	case !was:
		fmt.Fprintln(w, "The phone channel was already off.")
	default:
		fmt.Fprintln(w, "The phone channel is off: problems are not emailed and replies are not read. Settings are kept; agentkit phone enable turns it back on.")
	}
	if on && held > 0 {
		fmt.Fprintf(w, "%d %s raised while it was off %s held; agentkit phone send-pending sends them.\n", held, plural(held, "email", "emails"), plural(held, "is", "are"))
	}
	return nil
}

func newCmdPhoneSendPending(ios *ioStreams, runF func(context.Context) error) *cobra.Command {
	return &cobra.Command{
		Use:   "send-pending",
		Short: "Send the emails held while the phone channel was off",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context())
			}
			return phoneSendPendingRun(cmd.Context(), ios)
		},
	}
}

func phoneSendPendingRun(ctx context.Context, ios *ioStreams) error {
	s, db, err := ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	on, err := s.PhoneEnabled(ctx)
	if err != nil {
		return err
	}
	if !on {
		return errors.New("the phone channel is off, so held emails would stay held; run agentkit phone enable first")
	}
	n, err := s.ReleaseHeld(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(ios.Out, "No email is held.")
		return nil
	}
	fmt.Fprintf(ios.Out, "%d held %s will be sent by the running service (agentkit service start, if it is not running).\n", n, plural(n, "email", "emails"))
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
