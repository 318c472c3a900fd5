// Package status is the read model of what agentkit is doing: repositories, jobs and their tasks, open problems, pause state and events, for the CLI and the mailbot.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/state"
)

// Status is the whole picture at one moment.
type Status struct {
	PausedAll    bool         `json:"paused_all"`
	PausedBy     string       `json:"paused_by,omitempty"`
	OpenProblems int          `json:"open_problems"`
	Repos        []RepoStatus `json:"repos"`
}

// RepoStatus is one repository's part of the picture.
type RepoStatus struct {
	Name         string    `json:"name"`
	Path         string    `json:"path"`
	Paused       bool      `json:"paused"`
	PausedBy     string    `json:"paused_by,omitempty"`
	PausedAt     time.Time `json:"paused_at,omitzero"`
	OpenProblems int       `json:"open_problems"`
	// Jobs are the repository's unfinished jobs.
	Jobs []JobSummary `json:"jobs,omitempty"`
}

// Read builds the status from the store.
func Read(ctx context.Context, db *state.DB) (Status, error) {
	var st Status
	all, err := repos.List(ctx, db)
	if err != nil {
		return st, err
	}
	open := map[string]int{}
	rows, err := db.QueryContext(ctx, "SELECT repo, count(*) FROM problems WHERE state = 'open' GROUP BY repo")
	if err != nil {
		return st, fmt.Errorf("counting open problems: %w", err)
	}
	for rows.Next() {
		var r string
		var n int
		if err := rows.Scan(&r, &n); err != nil {
			rows.Close()
			return st, err
		}
		open[r] = n
		st.OpenProblems += n
	}
	rows.Close()
	type pause struct {
		paused      bool
		who, ch, at string
	}
	pauses := map[string]pause{}
	prow, err := db.QueryContext(ctx, "SELECT scope, paused, who, channel, at FROM pauses")
	if err != nil {
		return st, fmt.Errorf("reading pause state: %w", err)
	}
	for prow.Next() {
		var scope string
		var p pause
		if err := prow.Scan(&scope, &p.paused, &p.who, &p.ch, &p.at); err != nil {
			prow.Close()
			return st, err
		}
		pauses[scope] = p
	}
	prow.Close()
	jobs, err := jobSummaries(ctx, db)
	if err != nil {
		return st, err
	}
	if g := pauses[""]; g.paused {
		st.PausedAll, st.PausedBy = true, fmt.Sprintf("%s (%s)", g.who, g.ch)
	}
	for _, r := range all {
		rs := RepoStatus{Name: r.Name, Path: r.Path, OpenProblems: open[r.Name], Jobs: jobs[r.Name]}
		p := pauses[r.Name]
		if st.PausedAll {
			p = pauses[""]
		}
		if p.paused {
			rs.Paused, rs.PausedBy, rs.PausedAt = true, fmt.Sprintf("%s (%s)", p.who, p.ch), state.ParseTime(p.at)
		}
		st.Repos = append(st.Repos, rs)
	}
	return st, nil
}
