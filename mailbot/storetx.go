package mailbot

// Store lookups the inbound path makes inside its own transaction.

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentkit/agentkit/problems"
)

// problemIDOf returns the row id of the problem an answer was refused for,
// so the refusal threads under the problem's email; 0 when the refusal names
// no existing problem. The error is only a failed lookup.
func problemIDOf(ctx context.Context, tx runner, code problems.Code, answerErr error) (int64, error) {
	var no *problems.NotOpenError
	var nof *problems.NotOfferedError
	if !errors.As(answerErr, &no) && !errors.As(answerErr, &nof) {
		return 0, nil
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM problems WHERE code = ?", code).Scan(&id); err != nil {
		return 0, fmt.Errorf("reading problem %s: %w: %w", code, problems.ErrStore, err)
	}
	return id, nil
}

// repoExists reports whether a repository is registered under name.
func repoExists(ctx context.Context, tx runner, name string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM repos WHERE name = ?", name).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up repository %s: %w", name, err)
	}
	return n > 0, nil
}
