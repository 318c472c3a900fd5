package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
)

// storeFacts answers the verdict's questions from the state store, reading
// only, for phone check and phone test. (The service's own Facts live
// unexported in the mailbot package.)
type storeFacts struct {
	ctx context.Context
	db  *state.DB
	cfg *mailbot.Config
}

var _ mailbot.Facts = (*storeFacts)(nil)

func (f *storeFacts) processed(kind, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	var n int
	if err := f.db.QueryRowContext(f.ctx, "SELECT count(*) FROM processed WHERE kind = ? AND value = ?", kind, v).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up processed messages: %w", err)
	}
	return n > 0, nil
}

// IsProcessed reports whether the Message-ID was processed before.
func (f *storeFacts) IsProcessed(messageID string) (bool, error) {
	return f.processed("message-id", messageID)
}

// IsProcessedSignature reports whether the DKIM b= value was processed before.
func (f *storeFacts) IsProcessedSignature(b string) (bool, error) {
	return f.processed("signature", b)
}

// ProblemByMessageID returns the code of the problem an email of the bot's was about.
func (f *storeFacts) ProblemByMessageID(messageID string) (string, bool, error) {
	var code string
	err := f.db.QueryRowContext(f.ctx, `SELECT p.code FROM outbox o JOIN problems p ON p.id = o.problem_id
		WHERE o.message_id = ? ORDER BY o.id LIMIT 1`, messageID).Scan(&code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("looking up the thread of %s: %w", messageID, err)
	}
	return code, true, nil
}

// OwnMessageIDDomain is the domain of the Message-IDs the bot writes.
func (f *storeFacts) OwnMessageIDDomain() string {
	at := strings.LastIndexByte(f.cfg.BotAddress, '@')
	return "agentkit." + strings.ToLower(f.cfg.BotAddress[at+1:])
}
