package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/mailbot"
)

// serviceStatus is what agentkit service status shows.
type serviceStatus struct {
	Running bool      `json:"running"`
	PID     int       `json:"pid,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Repos are the repositories served now, each by its supervisor.
	Repos   []service.UnitState `json:"repos"`
	Mailbot *service.UnitState  `json:"mailbot,omitempty"`
	// NoMailbot says why the mailbot does not run.
	NoMailbot    string                 `json:"no_mailbot,omitempty"`
	Mailboxes    []mailbot.MailboxState `json:"mailboxes"`
	Outbox       outboxCounts           `json:"outbox"`
	OpenProblems int                    `json:"open_problems"`
	Log          string                 `json:"log"`
}

// outboxCounts counts owed mail by state.
type outboxCounts struct {
	Waiting int `json:"waiting"`
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Held    int `json:"held"`
}

func newCmdServiceStatus(ios *ioStreams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the service runs, since when, what it serves, the mailbox, the outbox and open problems",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := readServiceStatus(cmd.Context(), ios)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(ios, st)
			}
			writeServiceStatus(ios, st)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func readServiceStatus(ctx context.Context, ios *ioStreams) (serviceStatus, error) {
	home, err := ios.home()
	if err != nil {
		return serviceStatus{}, err
	}
	files := service.Files{Home: home}
	st := serviceStatus{Repos: []service.UnitState{}, Mailboxes: []mailbot.MailboxState{}, Log: files.Log()}
	var info service.PIDInfo
	st.Running, info = files.Running()
	if st.Running {
		st.PID, st.Started = info.PID, info.Started
		var pub serviceState
		if data, err := os.ReadFile(files.State()); err == nil {
			_ = json.Unmarshal(data, &pub)
		}
		for _, u := range pub.Units {
			if u.Name == mailbotUnit {
				st.Mailbot = &u
			} else if strings.HasPrefix(u.Name, repoUnitPrefix) {
				u.Name = strings.TrimPrefix(u.Name, repoUnitPrefix)
				st.Repos = append(st.Repos, u)
			}
		}
		st.NoMailbot = pub.NoMailbot
	}
	db, err := ios.openDB(ctx)
	if err != nil {
		return st, err
	}
	defer db.Close()
	if mb, err := mailbot.MailboxStates(ctx, db); err != nil {
		return st, err
	} else if mb != nil {
		st.Mailboxes = mb
	}
	box, err := mailbot.ReadOutbox(ctx, db, 0)
	if err != nil {
		return st, err
	}
	st.Outbox = outboxCounts{Waiting: box.Waiting, Sent: box.Sent, Failed: box.Failed, Held: box.Held}
	all, err := status.Read(ctx, db)
	if err != nil {
		return st, err
	}
	st.OpenProblems = all.OpenProblems
	return st, nil
}

func writeServiceStatus(ios *ioStreams, st serviceStatus) {
	w, now := ios.Out, ios.now()
	if !st.Running {
		fmt.Fprintln(w, "The service is not running. Start it with: agentkit service start")
	} else {
		fmt.Fprintf(w, "The service is running (pid %d), up since %s (%s).\n", st.PID, st.Started.Local().Format("2006-01-02 15:04:05"), age(now.Sub(st.Started)))
		if len(st.Repos) == 0 {
			fmt.Fprintln(w, "Repositories served: none (no registered repository has a started job).")
		} else {
			fmt.Fprintln(w, "Repositories served:")
			for _, u := range st.Repos {
				fmt.Fprintf(w, "  %s, since %s%s\n", u.Name, u.Started.Local().Format("15:04:05"), restarts(u))
			}
		}
		switch {
		case st.Mailbot != nil:
			fmt.Fprintf(w, "Mailbot: running since %s%s\n", st.Mailbot.Started.Local().Format("15:04:05"), restarts(*st.Mailbot))
		case st.NoMailbot != "":
			fmt.Fprintf(w, "Mailbot: not running: %s\n", st.NoMailbot)
		default:
			fmt.Fprintln(w, "Mailbot: not running")
		}
	}
	if len(st.Mailboxes) == 0 {
		fmt.Fprintln(w, "Mailbox: never reached")
	}
	for _, m := range st.Mailboxes {
		fmt.Fprintln(w, mailboxLine(m, now, 0))
	}
	o := st.Outbox
	line := fmt.Sprintf("Outbox: %d waiting, %d sent, %d failed", o.Waiting, o.Sent, o.Failed)
	if o.Held > 0 {
		line += fmt.Sprintf(", %d held", o.Held)
	}
	if o.Failed > 0 || o.Waiting > 0 || o.Held > 0 {
		line += " (agentkit phone status says more)"
	}
	fmt.Fprintln(w, line)
	if st.OpenProblems > 0 {
		fmt.Fprintf(w, "Open problems: %d (agentkit problem list)\n", st.OpenProblems)
	} else {
		fmt.Fprintln(w, "Open problems: none")
	}
	fmt.Fprintf(w, "Log: %s\n", st.Log)
}

// restarts says how often a unit was restarted, and why last.
func restarts(u service.UnitState) string {
	if u.Restarts == 0 {
		return ""
	}
	return fmt.Sprintf(", restarted %d times (last: %s)", u.Restarts, firstLine(u.LastErr))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
