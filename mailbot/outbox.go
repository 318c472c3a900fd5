package mailbot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// dbTimeLayout is fixed-width UTC, so times stored by the mailbot compare
// correctly as text (RFC 3339 with trimmed nanoseconds does not).
const dbTimeLayout = "2006-01-02T15:04:05.000000000Z"

// dbTime formats t for the mailbot's columns; the zero time is "".
func dbTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(dbTimeLayout)
}

// cappedKinds are the automatic messages counted against answers_per_hour;
// problem emails and job reports are never held back by the cap.
var cappedKinds = []problems.OutboxKind{problems.OutboxAnswer, problems.OutboxConfirmation}

func isCapped(k problems.OutboxKind) bool {
	for _, c := range cappedKinds {
		if c == k {
			return true
		}
	}
	return false
}

// outboxRow is one owed message as the sender reads it.
type outboxRow struct {
	id          int64
	kind        problems.OutboxKind
	problemID   int64
	decisionID  int64
	payload     string
	messageID   string
	msgDate     time.Time
	attempts    int
	nextAttempt time.Time
	createdAt   time.Time
}

const outboxColumns = `id, kind, coalesce(problem_id, 0), coalesce(decision_id, 0), payload, message_id, msg_date, attempts, next_attempt_at, created_at`

func scanOutbox(row interface{ Scan(...any) error }) (outboxRow, error) {
	var r outboxRow
	var date, next, created string
	err := row.Scan(&r.id, &r.kind, &r.problemID, &r.decisionID, &r.payload, &r.messageID, &date, &r.attempts, &next, &created)
	r.msgDate, r.nextAttempt, r.createdAt = state.ParseTime(date), state.ParseTime(next), state.ParseTime(created)
	return r, err
}

// dueRows returns the pending rows whose next attempt is due by now, oldest
// first, and the earliest later attempt time (zero when none waits).
func dueRows(ctx context.Context, db *state.DB, now time.Time) ([]outboxRow, time.Time, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+outboxColumns+" FROM outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY id", dbTime(now))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the outbox: %w", err)
	}
	defer rows.Close()
	var due []outboxRow
	for rows.Next() {
		r, err := scanOutbox(rows)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("reading the outbox: %w", err)
		}
		due = append(due, r)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the outbox: %w", err)
	}
	var next string
	err = db.QueryRowContext(ctx, "SELECT coalesce(min(next_attempt_at), '') FROM outbox WHERE state = 'pending' AND next_attempt_at > ?", dbTime(now)).Scan(&next)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the outbox: %w", err)
	}
	return due, state.ParseTime(next), nil
}

// assignMessageID gives the row its Message-ID and Date before the first
// attempt, and returns the ones it already had on later attempts, so every
// resend carries the same identity.
func assignMessageID(ctx context.Context, db *state.DB, r *outboxRow, id string, date time.Time) error {
	if r.messageID != "" {
		return nil
	}
	_, err := db.ExecContext(ctx, "UPDATE outbox SET message_id = ?, msg_date = ? WHERE id = ? AND message_id = ''", id, dbTime(date), r.id)
	if err != nil {
		return fmt.Errorf("recording the Message-ID of outbox row %d: %w", r.id, err)
	}
	var got, gotDate string
	if err := db.QueryRowContext(ctx, "SELECT message_id, msg_date FROM outbox WHERE id = ?", r.id).Scan(&got, &gotDate); err != nil {
		return fmt.Errorf("reading the Message-ID of outbox row %d: %w", r.id, err)
	}
	r.messageID, r.msgDate = got, state.ParseTime(gotDate)
	return nil
}

// markSent records the server's acceptance.
func markSent(ctx context.Context, db *state.DB, id int64, now time.Time) error {
	_, err := db.ExecContext(ctx, "UPDATE outbox SET state = 'sent', sent_at = ?, attempts = attempts + 1, last_error = '', next_attempt_at = '' WHERE id = ?", dbTime(now), id)
	if err != nil {
		return fmt.Errorf("recording outbox row %d as sent: %w", id, err)
	}
	return nil
}

// markFailed records a permanent refusal with the server's words.
func markFailed(ctx context.Context, db *state.DB, id int64, words string) error {
	_, err := db.ExecContext(ctx, "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_error = ?, next_attempt_at = '' WHERE id = ?", words, id)
	if err != nil {
		return fmt.Errorf("recording outbox row %d as failed: %w", id, err)
	}
	return nil
}

// markRetry records a temporary failure and when to try again.
func markRetry(ctx context.Context, db *state.DB, id int64, next time.Time, words string, counts bool) error {
	inc := 0
	if counts {
		inc = 1
	}
	_, err := db.ExecContext(ctx, "UPDATE outbox SET attempts = attempts + ?, last_error = ?, next_attempt_at = ? WHERE id = ? AND state = 'pending'", inc, words, dbTime(next), id)
	if err != nil {
		return fmt.Errorf("recording a retry of outbox row %d: %w", id, err)
	}
	return nil
}

// cappedSentSince returns how many capped messages were sent after since, and
// the earliest of their send times (zero when none).
func cappedSentSince(ctx context.Context, db *state.DB, since time.Time) (int, time.Time, error) {
	var n int
	var first string
	err := db.QueryRowContext(ctx, "SELECT count(*), coalesce(min(sent_at), '') FROM outbox WHERE kind IN (?, ?) AND sent_at <> '' AND sent_at > ?",
		cappedKinds[0], cappedKinds[1], dbTime(since)).Scan(&n, &first)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("counting answers sent this hour: %w", err)
	}
	return n, state.ParseTime(first), nil
}

// problemMessageID returns the Message-ID of a problem's first email, or ""
// when it was not sent yet.
func problemMessageID(ctx context.Context, db *state.DB, problemID int64) (string, error) {
	var id string
	err := db.QueryRowContext(ctx, "SELECT message_id FROM outbox WHERE problem_id = ? AND kind = ? AND message_id <> '' ORDER BY id LIMIT 1",
		problemID, problems.OutboxProblem).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("finding the email of problem %d: %w", problemID, err)
	}
	return id, nil
}

// OutboxEntry is one owed message as `agentkit phone status` shows it.
type OutboxEntry struct {
	ID        int64               `json:"id"`
	Kind      problems.OutboxKind `json:"kind"`
	Code      problems.Code       `json:"code,omitempty"`
	State     string              `json:"state"`
	MessageID string              `json:"message_id,omitempty"`
	Attempts  int                 `json:"attempts"`
	// NextAttempt is when a waiting row is tried again (zero: as soon as possible).
	NextAttempt time.Time `json:"next_attempt,omitzero"`
	// LastError holds the server's words for the last failure.
	LastError string    `json:"last_error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	SentAt    time.Time `json:"sent_at,omitzero"`
}

// OutboxSummary counts owed mail by state and lists what needs attention.
type OutboxSummary struct {
	Held    int `json:"held"`
	Waiting int `json:"waiting"`
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	// Entries lists every held, waiting and failed row, oldest first, then
	// the most recently sent ones.
	Entries []OutboxEntry `json:"entries"`
}

// ReadOutbox summarises the outbox for `agentkit phone status`; recentSent
// bounds how many sent rows are listed.
func ReadOutbox(ctx context.Context, db *state.DB, recentSent int) (OutboxSummary, error) {
	var s OutboxSummary
	rows, err := db.QueryContext(ctx, "SELECT state, count(*) FROM outbox GROUP BY state")
	if err != nil {
		return s, fmt.Errorf("summarising the outbox: %w", err)
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return s, fmt.Errorf("summarising the outbox: %w", err)
		}
		switch st {
		case "held":
			s.Held = n
		case "pending":
			s.Waiting = n
		case "sent":
			s.Sent = n
		case "failed":
			s.Failed = n
		}
	}
	rows.Close()
	const q = `SELECT o.id, o.kind, coalesce(p.code, ''), o.state, o.message_id, o.attempts, o.next_attempt_at, o.last_error, o.created_at, o.sent_at
		FROM outbox o LEFT JOIN problems p ON p.id = o.problem_id`
	list := func(where string, args ...any) error {
		rows, err := db.QueryContext(ctx, q+" "+where, args...)
		if err != nil {
			return fmt.Errorf("listing the outbox: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e OutboxEntry
			var next, created, sent string
			if err := rows.Scan(&e.ID, &e.Kind, &e.Code, &e.State, &e.MessageID, &e.Attempts, &next, &e.LastError, &created, &sent); err != nil {
				return fmt.Errorf("listing the outbox: %w", err)
			}
			if e.State == "pending" {
				e.State = "waiting"
			}
			e.NextAttempt, e.CreatedAt, e.SentAt = state.ParseTime(next), state.ParseTime(created), state.ParseTime(sent)
			s.Entries = append(s.Entries, e)
		}
		return rows.Err()
	}
	if err := list("WHERE o.state IN ('held', 'pending', 'failed') ORDER BY o.id"); err != nil {
		return s, err
	}
	if recentSent > 0 {
		if err := list("WHERE o.state = 'sent' ORDER BY o.sent_at DESC, o.id DESC LIMIT ?", recentSent); err != nil {
			return s, err
		}
	}
	return s, nil
}
