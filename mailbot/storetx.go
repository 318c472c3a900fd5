package mailbot

// The problems store has Answer and SetPaused only as whole transactions,
// and an inbound message must change the decision, the phone log and what is
// remembered as processed in ONE transaction. Until problems exports
// AnswerTx and SetPausedTx, these mirror their semantics inside the caller's
// transaction; keep them in step with problems/answer.go and problems/pause.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// answerTx is problems.Store.Answer inside tx: it refuses an unknown problem
// (*problems.NotFoundError), one not open (*problems.NotOpenError) and a
// reply not offered (*problems.NotOfferedError); the same source answering
// the same problem again returns the first decision.
func answerTx(ctx context.Context, tx runner, now time.Time, code problems.Code, a problems.Answer) (*problems.Decision, int64, error) {
	if a.Reply.Verb.TakesWords() && strings.TrimSpace(a.Reply.Words) == "" {
		return nil, 0, fmt.Errorf("%s needs words after it", a.Reply.Verb)
	}
	if !a.Reply.Verb.TakesWords() && a.Reply.Words != "" {
		return nil, 0, fmt.Errorf("%s takes no words", a.Reply.Verb)
	}
	var problemID int64
	var st problems.State
	var replies string
	err := tx.QueryRowContext(ctx, "SELECT id, state, replies FROM problems WHERE code = ?", code).Scan(&problemID, &st, &replies)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, &problems.NotFoundError{Code: code}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading problem %s: %w: %w", code, errStoreFailed, err)
	}
	prev, err := decisionOf(ctx, tx, problemID, code)
	if err != nil {
		return nil, 0, err
	}
	if prev != nil && a.SourceID != "" && prev.SourceID == a.SourceID && prev.Channel == a.Channel {
		return prev, problemID, nil
	}
	if st != problems.Open {
		return nil, problemID, &problems.NotOpenError{Code: code, State: st, Decision: prev}
	}
	offered := false
	var verbs []problems.Verb
	for _, f := range strings.Fields(replies) {
		verbs = append(verbs, problems.Verb(f))
		offered = offered || problems.Verb(f) == a.Reply.Verb
	}
	if !offered {
		return nil, problemID, &problems.NotOfferedError{Code: code, Reply: a.Reply.Verb, Offered: verbs}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO decisions (problem_id, reply, words, channel, who, source_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		problemID, a.Reply.Verb, a.Reply.Words, a.Channel, a.Who, a.SourceID, state.Now(now))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: decisions.channel, decisions.source_id") {
			return nil, problemID, fmt.Errorf("message %s already answered another problem; one message answers one problem", a.SourceID)
		}
		return nil, problemID, fmt.Errorf("recording the decision: %w: %w", errStoreFailed, err)
	}
	id, _ := res.LastInsertId()
	if _, err := tx.ExecContext(ctx, "UPDATE problems SET state = 'answered', updated_at = ? WHERE id = ?", state.Now(now), problemID); err != nil {
		return nil, problemID, fmt.Errorf("recording the decision: %w: %w", errStoreFailed, err)
	}
	return &problems.Decision{ID: id, Code: code, Reply: a.Reply.Verb, Words: a.Reply.Words, Channel: a.Channel, Who: a.Who, SourceID: a.SourceID, At: now}, problemID, nil
}

func decisionOf(ctx context.Context, tx runner, problemID int64, code problems.Code) (*problems.Decision, error) {
	var d problems.Decision
	var at, applied string
	err := tx.QueryRowContext(ctx, "SELECT id, reply, words, channel, who, source_id, created_at, applied_at, outcome FROM decisions WHERE problem_id = ?", problemID).
		Scan(&d.ID, &d.Reply, &d.Words, &d.Channel, &d.Who, &d.SourceID, &at, &applied, &d.Outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the decision on %s: %w: %w", code, errStoreFailed, err)
	}
	d.Code, d.At, d.AppliedAt = code, state.ParseTime(at), state.ParseTime(applied)
	return &d, nil
}

// setPausedTx is problems.Store.SetPaused inside tx.
func setPausedTx(ctx context.Context, tx runner, now time.Time, repo string, paused bool, who string, ch problems.Channel) error {
	at := state.Now(now)
	if repo == "" && !paused {
		if _, err := tx.ExecContext(ctx, "UPDATE pauses SET paused = 0, who = ?, channel = ?, at = ? WHERE paused = 1", who, ch, at); err != nil {
			return fmt.Errorf("resuming: %w", err)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO pauses (scope, paused, who, channel, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET paused = excluded.paused, who = excluded.who, channel = excluded.channel, at = excluded.at`,
		repo, paused, who, ch, at)
	if err != nil {
		return fmt.Errorf("recording the pause state: %w", err)
	}
	return nil
}

// repoExists reports whether a repository is registered under name.
func repoExists(ctx context.Context, tx runner, name string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM repos WHERE name = ?", name).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up repository %s: %w", name, err)
	}
	return n > 0, nil
}
