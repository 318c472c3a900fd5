package problems

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

// Pause is the pause state of every repository (Repo "") or of one.
type Pause struct {
	Repo    string    `json:"repo,omitempty"`
	Paused  bool      `json:"paused"`
	Who     string    `json:"who,omitempty"`
	Channel Channel   `json:"channel,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

// SetPaused pauses or resumes every repository (repo "") or one. Resuming
// every repository also lifts each repository's own pause.
func (s *Store) SetPaused(ctx context.Context, repo string, paused bool, who string, ch Channel) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return s.SetPausedTx(ctx, tx, repo, paused, who, ch)
	})
}

// SetPausedTx is SetPaused inside the caller's transaction.
func (s *Store) SetPausedTx(ctx context.Context, tx Runner, repo string, paused bool, who string, ch Channel) error {
	now := state.Now(s.Now())
	if repo == "" && !paused {
		if _, err := tx.ExecContext(ctx, "UPDATE pauses SET paused = 0, who = ?, channel = ?, at = ? WHERE paused = 1", who, ch, now); err != nil {
			return fmt.Errorf("resuming: %w: %w", ErrStore, err)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO pauses (scope, paused, who, channel, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET paused = excluded.paused, who = excluded.who, channel = excluded.channel, at = excluded.at`,
		repo, paused, who, ch, now)
	if err != nil {
		return fmt.Errorf("recording the pause state: %w: %w", ErrStore, err)
	}
	return nil
}

// Paused returns whether a repository is paused, and by which record: the
// all-repositories pause wins over the repository's own.
func (s *Store) Paused(ctx context.Context, repo string) (Pause, error) {
	ps, err := s.Pauses(ctx)
	if err != nil {
		return Pause{}, err
	}
	var own Pause
	for _, p := range ps {
		if p.Repo == "" && p.Paused {
			return p, nil
		}
		if repo != "" && p.Repo == repo {
			own = p
		}
	}
	own.Repo = repo
	return own, nil
}

// Pauses returns every pause record, the all-repositories one first.
func (s *Store) Pauses(ctx context.Context) ([]Pause, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT scope, paused, who, channel, at FROM pauses ORDER BY scope")
	if err != nil {
		return nil, fmt.Errorf("reading pause state: %w", err)
	}
	defer rows.Close()
	var out []Pause
	for rows.Next() {
		var p Pause
		var at string
		if err := rows.Scan(&p.Repo, &p.Paused, &p.Who, &p.Channel, &at); err != nil {
			return nil, err
		}
		p.At = state.ParseTime(at)
		out = append(out, p)
	}
	return out, rows.Err()
}
