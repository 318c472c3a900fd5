package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/mailbot"
)

type phoneCheckOptions struct {
	ios     *ioStreams
	Files   []string
	JSON    bool
	Offline bool
	// lookupTXT replaces live DNS in tests; nil means live (or none, offline).
	lookupTXT mailbot.LookupTXTFunc
}

func newCmdPhoneCheck(ios *ioStreams, runF func(*phoneCheckOptions) error) *cobra.Command {
	opts := &phoneCheckOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Show the verdict the bot would reach on saved messages (.eml), without acting or sending",
		Long: `Run the bot's checks on messages saved from any mail client (.eml files), in
order, and print each check's result and reason, the command, the code and
the words. Nothing is recorded and nothing is sent. DKIM keys are looked up in
DNS unless --offline (then only the provider's Authentication-Results can
authenticate a message). The exit status is 0 only when every message would be
obeyed.`,
		Example: `  agentkit phone check ~/Downloads/reply.eml
  agentkit phone check --json --offline *.eml`,
		Args: minArgs(1, "give one or more saved messages, like: agentkit phone check reply.eml"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return phoneCheckRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per message, one per line")
	cmd.Flags().BoolVar(&opts.Offline, "offline", false, "no DNS lookups: only the Authentication-Results path can pass")
	return cmd
}

// errOfflineDNS is what DKIM key lookups return under --offline.
var errOfflineDNS = errors.New("not looked up: --offline")

func phoneCheckRun(ctx context.Context, opts *phoneCheckOptions) error {
	ios := opts.ios
	home, err := ios.home()
	if err != nil {
		return err
	}
	cfg, err := loadPhoneConfig(home)
	if err != nil {
		return err
	}
	s, db, err := ios.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	lookup := opts.lookupTXT
	if opts.Offline {
		lookup = func(string) ([]string, error) { return nil, errOfflineDNS }
	}
	deps := mailbot.Deps{Now: ios.now, LookupTXT: lookup, Facts: mailbot.NewStoreFacts(ctx, db, &cfg)}

	refused := 0
	for i, file := range opts.Files {
		raw, err := readMessage(file)
		if err != nil {
			return err
		}
		v, err := mailbot.Decide(raw, time.Time{}, &cfg, deps)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		j, err := judge(ctx, s, v)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		j.File = file
		if !j.Obeyed {
			refused++
		}
		if opts.JSON {
			if err := json.NewEncoder(ios.Out).Encode(j); err != nil {
				return fmt.Errorf("writing JSON: %w", err)
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(ios.Out)
		}
		fmt.Fprintf(ios.Out, "%s: %s\n", file, j.headline())
		writeJudged(ios.Out, j)
	}
	if refused > 0 {
		return fmt.Errorf("%d of %d %s would not be obeyed", refused, len(opts.Files), plural(len(opts.Files), "message", "messages"))
	}
	return nil
}

// maxCheckBytes bounds what phone check reads: the largest
// max_message_bytes phone.yaml allows. The verdict itself refuses anything
// over the configured limit, saying by how much.
const maxCheckBytes = 64 << 20

// readMessage reads a saved message.
func readMessage(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading the message: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxCheckBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(raw) > maxCheckBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes; no reply is that big, so it is not checked", file, maxCheckBytes)
	}
	return raw, nil
}
