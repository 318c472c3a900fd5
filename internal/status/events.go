package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

// Event is one recorded event of the supervisor.
type Event struct {
	ID      int64     `json:"id"`
	Repo    string    `json:"repo"`
	Job     string    `json:"job,omitempty"`
	Task    string    `json:"task,omitempty"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

// EventFilter chooses which events Events returns.
type EventFilter struct {
	Repo  string // "" for every repository
	Job   string
	Task  string
	Limit int // the newest Limit events; 0 for 50
}

// Events returns the newest events that match, oldest first.
func Events(ctx context.Context, db *state.DB, f EventFilter) ([]Event, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{{"repo", f.Repo}, {"job", f.Job}, {"task", f.Task}} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := "SELECT id, repo, job, task, at, kind, message FROM events"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at string
		if err := rows.Scan(&e.ID, &e.Repo, &e.Job, &e.Task, &at, &e.Kind, &e.Message); err != nil {
			return nil, err
		}
		e.At = state.ParseTime(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
