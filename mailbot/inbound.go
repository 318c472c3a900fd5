package mailbot

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// mailboxKey names one watched mailbox in the store.
type mailboxKey struct {
	account string // "user on host:port"
	mailbox string
}

// mailboxState is where a mailbox was left: every message up to lastUID
// under uidValidity is processed and marked on the server.
type mailboxState struct {
	uidValidity uint32
	lastUID     uint32
}

func loadMailbox(ctx context.Context, db *state.DB, k mailboxKey) (mailboxState, error) {
	var s mailboxState
	err := db.QueryRowContext(ctx, "SELECT uid_validity, last_uid FROM mailboxes WHERE account = ? AND mailbox = ?", k.account, k.mailbox).Scan(&s.uidValidity, &s.lastUID)
	if errors.Is(err, sql.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading where the mailbox was left: %w", err)
	}
	return s, nil
}

// saveMailboxUIDs records the mailbox's UIDVALIDITY and last processed UID.
func saveMailboxUIDs(ctx context.Context, db *state.DB, k mailboxKey, s mailboxState, now time.Time) error {
	_, err := db.ExecContext(ctx, `INSERT INTO mailboxes (account, mailbox, uid_validity, last_uid, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account, mailbox) DO UPDATE SET uid_validity = excluded.uid_validity, last_uid = excluded.last_uid, updated_at = excluded.updated_at`,
		k.account, k.mailbox, s.uidValidity, s.lastUID, dbTime(now))
	if err != nil {
		return fmt.Errorf("recording where the mailbox was left: %w", err)
	}
	return nil
}

// saveMailboxReached records a working connection.
func saveMailboxReached(ctx context.Context, db *state.DB, k mailboxKey, idle bool, now time.Time) error {
	_, err := db.ExecContext(ctx, `INSERT INTO mailboxes (account, mailbox, last_reached_at, idle, down_since, last_error, updated_at) VALUES (?, ?, ?, ?, '', '', ?)
		ON CONFLICT (account, mailbox) DO UPDATE SET last_reached_at = excluded.last_reached_at, idle = excluded.idle, down_since = '', last_error = '', updated_at = excluded.updated_at`,
		k.account, k.mailbox, dbTime(now), idle, dbTime(now))
	if err != nil {
		return fmt.Errorf("recording the mailbox as reached: %w", err)
	}
	return nil
}

// saveMailboxDown records an outage (its start is kept across retries).
func saveMailboxDown(ctx context.Context, db *state.DB, k mailboxKey, cause string, now time.Time) error {
	_, err := db.ExecContext(ctx, `INSERT INTO mailboxes (account, mailbox, down_since, last_error, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account, mailbox) DO UPDATE SET down_since = CASE WHEN down_since = '' THEN excluded.down_since ELSE down_since END,
		last_error = excluded.last_error, updated_at = excluded.updated_at`,
		k.account, k.mailbox, dbTime(now), cause, dbTime(now))
	if err != nil {
		return fmt.Errorf("recording the mailbox as unreachable: %w", err)
	}
	return nil
}

// inboundKnownUIDs returns which UIDs in [from, to] were already decided:
// after a crash between storing and marking, those are only marked.
func inboundKnownUIDs(ctx context.Context, db *state.DB, k mailboxKey, uidValidity, from, to uint32) (map[uint32]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT uid FROM inbound WHERE account = ? AND mailbox = ? AND uid_validity = ? AND uid BETWEEN ? AND ?",
		k.account, k.mailbox, uidValidity, from, to)
	if err != nil {
		return nil, fmt.Errorf("looking up inbound messages: %w", err)
	}
	defer rows.Close()
	known := map[uint32]bool{}
	for rows.Next() {
		var uid uint32
		if err := rows.Scan(&uid); err != nil {
			return nil, fmt.Errorf("looking up inbound messages: %w", err)
		}
		known[uid] = true
	}
	return known, rows.Err()
}

// inboundCopy reports whether the very same message (same Message-ID and
// bytes) was decided before under another UID: a rescan after a UIDVALIDITY
// change. A different message reusing a Message-ID is not a copy; the
// decision treats it as a replay.
func inboundCopy(ctx context.Context, q runner, messageID, sha string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM inbound WHERE message_id = ? AND sha256 = ?", messageID, sha).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("looking up an inbound message: %w", err)
	}
	return n > 0, nil
}

// processedAny reports whether a Message-ID or any signature was processed.
func processedAny(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, messageID string, signatures []string) (bool, error) {
	check := func(kind, v string) (bool, error) {
		var n int
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM processed WHERE kind = ? AND value = ?", kind, v).Scan(&n); err != nil {
			return false, fmt.Errorf("looking up processed messages: %w", err)
		}
		return n > 0, nil
	}
	if messageID != "" {
		if seen, err := check("message-id", messageID); seen || err != nil {
			return seen, err
		}
	}
	for _, s := range signatures {
		if seen, err := check("signature", s); seen || err != nil {
			return seen, err
		}
	}
	return false, nil
}

// inboundRow is one phone-log row to insert.
type inboundRow struct {
	key          mailboxKey
	uidValidity  uint32
	uid          uint32
	messageID    string
	sha          string
	sender       string
	subject      string
	size         int64
	internalDate time.Time
	outcome      string
	reason       string
	code         problems.Code
	decisionID   int64
	verdict      string
}

func insertInbound(ctx context.Context, tx runner, r inboundRow, now time.Time) (int64, error) {
	var decision any
	if r.decisionID != 0 {
		decision = r.decisionID
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO inbound (account, mailbox, uid_validity, uid, message_id, sha256, sender, subject, size, internal_date, outcome, reason, code, decision_id, verdict, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.key.account, r.key.mailbox, r.uidValidity, r.uid, r.messageID, r.sha, r.sender, r.subject, r.size, dbTime(r.internalDate),
		r.outcome, r.reason, r.code, decision, r.verdict, dbTime(now))
	if err != nil {
		return 0, fmt.Errorf("recording the verdict on a message: %w", err)
	}
	return res.LastInsertId()
}

func insertProcessed(ctx context.Context, tx runner, inboundID int64, messageID string, signatures []string, now time.Time) error {
	add := func(kind, v string) error {
		_, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO processed (kind, value, inbound_id, at) VALUES (?, ?, ?, ?)", kind, v, inboundID, dbTime(now))
		if err != nil {
			return fmt.Errorf("remembering a processed message: %w", err)
		}
		return nil
	}
	if messageID != "" {
		if err := add("message-id", messageID); err != nil {
			return err
		}
	}
	for _, s := range signatures {
		if s == "" {
			continue
		}
		if err := add("signature", s); err != nil {
			return err
		}
	}
	return nil
}

// Verdict log and mailbox state, for `agentkit phone log` and `phone status`.

// LogEntry is one inbound message in the phone log.
type LogEntry struct {
	ID           int64         `json:"id"`
	At           time.Time     `json:"at"`
	MessageID    string        `json:"message_id,omitempty"`
	From         string        `json:"from,omitempty"`
	Subject      string        `json:"subject,omitempty"`
	Size         int64         `json:"size"`
	InternalDate time.Time     `json:"internal_date,omitzero"`
	Outcome      string        `json:"outcome"`
	Reason       string        `json:"reason,omitempty"`
	Code         problems.Code `json:"code,omitempty"`
	DecisionID   int64         `json:"decision_id,omitempty"`
	// Verdict is the decision's full record: each check, the DKIM domain,
	// the authserv-id used.
	Verdict json.RawMessage `json:"verdict,omitempty"`
}

// RecentVerdicts returns the newest phone-log entries, newest first.
func RecentVerdicts(ctx context.Context, db *state.DB, limit int) ([]LogEntry, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := db.QueryContext(ctx, `SELECT id, at, message_id, sender, subject, size, internal_date, outcome, reason, code, coalesce(decision_id, 0), verdict
		FROM inbound ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the phone log: %w", err)
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var e LogEntry
		var at, idate, verdict string
		if err := rows.Scan(&e.ID, &at, &e.MessageID, &e.From, &e.Subject, &e.Size, &idate, &e.Outcome, &e.Reason, &e.Code, &e.DecisionID, &verdict); err != nil {
			return nil, fmt.Errorf("reading the phone log: %w", err)
		}
		e.At, e.InternalDate = state.ParseTime(at), state.ParseTime(idate)
		if json.Valid([]byte(verdict)) {
			e.Verdict = json.RawMessage(verdict)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// MailboxState is how the watched mailbox looks from the store.
type MailboxState struct {
	Account       string    `json:"account"`
	Mailbox       string    `json:"mailbox"`
	UIDValidity   uint32    `json:"uid_validity"`
	LastUID       uint32    `json:"last_uid"`
	LastReached   time.Time `json:"last_reached,omitzero"`
	IdleInUse     bool      `json:"idle_in_use"`
	DownSince     time.Time `json:"down_since,omitzero"`
	LastError     string    `json:"last_error,omitempty"`
	UpdatedAt     time.Time `json:"updated_at"`
	Unreachable   bool      `json:"unreachable"`
	ProcessedMsgs int       `json:"processed"`
}

// MailboxStates returns every watched mailbox's state.
func MailboxStates(ctx context.Context, db *state.DB) ([]MailboxState, error) {
	rows, err := db.QueryContext(ctx, `SELECT m.account, m.mailbox, m.uid_validity, m.last_uid, m.last_reached_at, m.idle, m.down_since, m.last_error, m.updated_at,
		(SELECT count(*) FROM inbound i WHERE i.account = m.account AND i.mailbox = m.mailbox)
		FROM mailboxes m ORDER BY m.account, m.mailbox`)
	if err != nil {
		return nil, fmt.Errorf("reading mailbox state: %w", err)
	}
	defer rows.Close()
	var out []MailboxState
	for rows.Next() {
		var s MailboxState
		var reached, down, updated string
		if err := rows.Scan(&s.Account, &s.Mailbox, &s.UIDValidity, &s.LastUID, &reached, &s.IdleInUse, &down, &s.LastError, &updated, &s.ProcessedMsgs); err != nil {
			return nil, fmt.Errorf("reading mailbox state: %w", err)
		}
		s.LastReached, s.DownSince, s.UpdatedAt = state.ParseTime(reached), state.ParseTime(down), state.ParseTime(updated)
		s.Unreachable = !s.DownSince.IsZero()
		out = append(out, s)
	}
	return out, rows.Err()
}
