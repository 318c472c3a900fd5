package mailbot

import (
	"context"
	"database/sql"
	"sync"

	"github.com/agentkit/agentkit/problems"
)

// runner is what the store code runs statements on: the database, a
// transaction, or either through prepared statements.
type runner = problems.Runner

var (
	_ runner = preparedTx{}
	_ runner = preparedDB{}
)

// stmtCache prepares each statement of the inbound path once, so SQLite
// parses it once per connection instead of once per message (parsing was
// a fifth of the time of a large backlog).
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = st
	return st, nil
}

// in runs statements inside tx through the cache.
func (c *stmtCache) in(tx *sql.Tx) preparedTx { return preparedTx{tx: tx, c: c} }

// onDB runs statements outside a transaction through the cache.
func (c *stmtCache) onDB() preparedDB { return preparedDB{c: c} }

// preparedTx is a transaction running cached statements.
type preparedTx struct {
	tx *sql.Tx
	c  *stmtCache
}

// ExecContext runs a cached statement in the transaction.
func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.c.stmt(ctx, query)
	if err != nil {
		return p.tx.ExecContext(ctx, query, args...)
	}
	return p.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// QueryRowContext runs a cached query in the transaction.
func (p preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.c.stmt(ctx, query)
	if err != nil {
		return p.tx.QueryRowContext(ctx, query, args...)
	}
	return p.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// preparedDB runs cached statements outside a transaction.
type preparedDB struct{ c *stmtCache }

// ExecContext runs a cached statement.
func (p preparedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.c.stmt(ctx, query)
	if err != nil {
		return p.c.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// QueryRowContext runs a cached query.
func (p preparedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.c.stmt(ctx, query)
	if err != nil {
		return p.c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
