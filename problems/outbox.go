package problems

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentkit/agentkit/internal/state"
)

// OutboxKind names what an outbox row owes the owner.
type OutboxKind string

// The kinds of mail the store owes; the mailbot renders each when it sends.
const (
	OutboxProblem      OutboxKind = "problem"
	OutboxConfirmation OutboxKind = "confirmation"
	OutboxAnswer       OutboxKind = "answer"
	OutboxJobDone      OutboxKind = "job_done"
)

const phoneKey = "phone.enabled"

// PhoneEnabled reports whether the phone channel is on.
func (s *Store) PhoneEnabled(ctx context.Context) (bool, error) {
	return phoneEnabled(ctx, s.db)
}

func phoneEnabled(ctx context.Context, q querier) (bool, error) {
	var v string
	err := q.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", phoneKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the phone channel setting: %w", err)
	}
	return v == "1", nil
}

// SetPhoneEnabled turns the phone channel on or off. Rows owed while it was
// off stay held; ReleaseHeld sends them when the owner asks.
func (s *Store) SetPhoneEnabled(ctx context.Context, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, phoneKey, v)
	if err != nil {
		return fmt.Errorf("setting the phone channel: %w", err)
	}
	return nil
}

// ReleaseHeld makes every held outbox row pending and returns how many.
func (s *Store) ReleaseHeld(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, "UPDATE outbox SET state = 'pending' WHERE state = 'held'")
	if err != nil {
		return 0, fmt.Errorf("releasing held mail: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Enqueue owes the owner a message of the given kind (an answer, a job's end),
// pending when the phone channel is on and held otherwise.
func (s *Store) Enqueue(ctx context.Context, kind OutboxKind, problemID, decisionID int64, payload string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return enqueueTx(ctx, tx, kind, problemID, decisionID, payload, state.Now(s.Now()))
	})
}

// EnqueueTx is Enqueue inside the caller's transaction.
func (s *Store) EnqueueTx(ctx context.Context, tx *sql.Tx, kind OutboxKind, problemID, decisionID int64, payload string) error {
	return enqueueTx(ctx, tx, kind, problemID, decisionID, payload, state.Now(s.Now()))
}

func enqueueTx(ctx context.Context, tx *sql.Tx, kind OutboxKind, problemID, decisionID int64, payload, now string) error {
	on, err := phoneEnabled(ctx, tx)
	if err != nil {
		return err
	}
	st := "held"
	if on {
		st = "pending"
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO outbox (kind, problem_id, decision_id, payload, state, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		kind, nullID(problemID), nullID(decisionID), payload, st, now)
	if err != nil {
		return fmt.Errorf("owing the owner an email: %w", err)
	}
	return nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
