package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/mailbot"
)

type phoneLogOptions struct {
	ios   *ioStreams
	JSON  bool
	Limit int
}

func newCmdPhoneLog(ios *ioStreams, runF func(*phoneLogOptions) error) *cobra.Command {
	opts := &phoneLogOptions{ios: ios}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the recent inbound messages and what the bot decided, with why",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 1 {
				return usageError{msg: "--limit must be 1 or more"}
			}
			if runF != nil {
				return runF(opts)
			}
			return phoneLogRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (an array, newest first, each with its full verdict)")
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "how many messages to show")
	return cmd
}

func phoneLogRun(ctx context.Context, opts *phoneLogOptions) error {
	db, err := opts.ios.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := mailbot.RecentVerdicts(ctx, db, opts.Limit)
	if err != nil {
		return err
	}
	if opts.JSON {
		if entries == nil {
			entries = []mailbot.LogEntry{}
		}
		return writeJSON(opts.ios, entries)
	}
	w := opts.ios.Out
	if len(entries) == 0 {
		fmt.Fprintln(w, "No message has been read yet.")
		return nil
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := fmt.Sprintf("%s  %-8s", e.At.Local().Format("2006-01-02 15:04"), e.Outcome)
		if e.Code != "" {
			head += " " + string(e.Code)
		}
		fmt.Fprintf(w, "%s  from %s  %q\n", head, orDash(e.From), truncate(e.Subject, 60))
		if e.DecisionID != 0 {
			fmt.Fprintf(w, "  recorded as decision %d\n", e.DecisionID)
		}
		if e.Reason != "" {
			fmt.Fprintf(w, "  %s\n", e.Reason)
		}
		var v mailbot.Verdict
		if len(e.Verdict) > 0 && json.Unmarshal(e.Verdict, &v) == nil {
			if a := authLine(v); a != "" {
				fmt.Fprintf(w, "  %s\n", a)
			}
		}
	}
	return nil
}

// authLine says how a message was (or was not) authenticated.
func authLine(v mailbot.Verdict) string {
	if a := v.Auth; a != nil {
		if a.Path == "authres" {
			return fmt.Sprintf("authenticated by %s's Authentication-Results: %s=pass for %s", a.AuthservID, a.Method, a.Domain)
		}
		return fmt.Sprintf("authenticated by the bot's own DKIM check: d=%s", a.Domain)
	}
	var sigs []string
	for _, s := range v.Signatures {
		d := "d=" + s.Domain + " " + s.Result
		if s.Aligned {
			d += ", aligned"
		} else {
			d += ", not aligned"
		}
		sigs = append(sigs, d)
	}
	if len(sigs) > 0 {
		return "DKIM signatures: " + strings.Join(sigs, "; ")
	}
	return ""
}
