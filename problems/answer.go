package problems

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/internal/state"
)

// Runner runs statements: a *sql.Tx, or a cache of statements prepared on one.
type Runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var (
	_ Runner = (*sql.Tx)(nil)
	_ Runner = (*sql.DB)(nil)
)

// ErrStore marks a failure of the state store itself, worth trying again
// later, as opposed to a refusal of the answer.
var ErrStore = errors.New("problems: the state store failed")

// Answer records a decision on an open problem. It refuses an unknown
// problem, one that is not open, and a reply the problem does not offer. The
// same source message answering the same problem again returns the first
// decision unchanged, so a message read twice is applied once.
func (s *Store) Answer(ctx context.Context, code Code, a Answer) (*Decision, error) {
	var d *Decision
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = s.AnswerTx(ctx, tx, code, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// AnswerTx is Answer inside the caller's transaction, so the mailbot can
// record a decision, its phone log row and what it remembers as processed
// together. Errors are the typed refusals, reply errors, or ErrStore.
func (s *Store) AnswerTx(ctx context.Context, tx Runner, code Code, a Answer) (*Decision, error) {
	if a.Channel == "" || strings.TrimSpace(a.Who) == "" {
		return nil, errors.New("answering a problem: the channel and who answered are required")
	}
	if a.Reply.Verb.TakesWords() && strings.TrimSpace(a.Reply.Words) == "" {
		return nil, fmt.Errorf("%s needs words after it", a.Reply.Verb)
	}
	if !a.Reply.Verb.TakesWords() && a.Reply.Words != "" {
		return nil, fmt.Errorf("%s takes no words", a.Reply.Verb)
	}
	p, err := getProblem(ctx, tx, code)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	if p.Decision != nil && a.SourceID != "" && p.Decision.SourceID == a.SourceID && p.Decision.Channel == a.Channel {
		p.Decision.ProblemID = p.id
		return p.Decision, nil
	}
	if p.State != Open {
		return nil, &NotOpenError{Code: code, State: p.State, Decision: p.Decision}
	}
	if !p.Offers(a.Reply.Verb) {
		return nil, &NotOfferedError{Code: code, Reply: a.Reply.Verb, Offered: p.Replies}
	}
	now := s.Now()
	res, err := tx.ExecContext(ctx, `INSERT INTO decisions (problem_id, reply, words, channel, who, source_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, p.id, a.Reply.Verb, a.Reply.Words, a.Channel, a.Who, a.SourceID, state.Now(now))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: decisions.channel, decisions.source_id") {
			return nil, fmt.Errorf("message %s already answered another problem; one message answers one problem", a.SourceID)
		}
		return nil, fmt.Errorf("recording the decision: %w: %w", ErrStore, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("recording the decision: %w: %w", ErrStore, err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE problems SET state = 'answered', updated_at = ? WHERE id = ?", state.Now(now), p.id); err != nil {
		return nil, fmt.Errorf("recording the decision: %w: %w", ErrStore, err)
	}
	return &Decision{ID: id, ProblemID: p.id, Code: code, Reply: a.Reply.Verb, Words: a.Reply.Words, Channel: a.Channel, Who: a.Who, SourceID: a.SourceID, At: now}, nil
}

// ErrAlreadyApplied is returned when a decision was marked applied before.
var ErrAlreadyApplied = errors.New("problems: decision already applied")

// MarkApplied records a decision's outcome and closes its problem; in the
// same transaction it owes the owner a confirmation when the phone channel is on.
func (s *Store) MarkApplied(ctx context.Context, decisionID int64, outcome string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return s.MarkAppliedTx(ctx, tx, decisionID, outcome)
	})
}

// MarkAppliedTx is MarkApplied inside the caller's transaction, so the
// supervisor's own state changes and the closing commit together.
func (s *Store) MarkAppliedTx(ctx context.Context, tx *sql.Tx, decisionID int64, outcome string) error {
	now := state.Now(s.Now())
	res, err := tx.ExecContext(ctx, "UPDATE decisions SET applied_at = ?, outcome = ? WHERE id = ? AND applied_at = ''", now, outcome, decisionID)
	if err != nil {
		return fmt.Errorf("marking decision %d applied: %w", decisionID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var exists int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM decisions WHERE id = ?", decisionID).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return fmt.Errorf("no decision %d", decisionID)
		}
		return ErrAlreadyApplied
	}
	var problemID int64
	if err := tx.QueryRowContext(ctx, "SELECT problem_id FROM decisions WHERE id = ?", decisionID).Scan(&problemID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE problems SET state = 'closed', updated_at = ? WHERE id = ?", now, problemID); err != nil {
		return err
	}
	on, err := phoneEnabled(ctx, tx)
	if err != nil {
		return err
	}
	if on {
		return enqueueTx(ctx, tx, OutboxConfirmation, problemID, decisionID, "", now)
	}
	return nil
}

// Pending returns the decisions not yet applied, oldest first, with their
// problems; repo limits them to one repository ("" for all).
func (s *Store) Pending(ctx context.Context, repo string) ([]*Problem, error) {
	q := fullSelect + " WHERE p.state = 'answered' AND d.applied_at = ''"
	var args []any
	if repo != "" {
		q += " AND p.repo = ?"
		args = append(args, repo)
	}
	rows, err := s.db.QueryContext(ctx, q+" ORDER BY d.id", args...)
	if err != nil {
		return nil, fmt.Errorf("listing pending decisions: %w", err)
	}
	defer rows.Close()
	var out []*Problem
	for rows.Next() {
		p, err := scanProblem(rows, true, true)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
