package problems

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/redact"
	"github.com/agentkit/agentkit/internal/state"
)

// Store keeps problems, decisions, pause state and the outbox rows they owe.
type Store struct {
	db *state.DB
	// Now is the clock; tests inject their own.
	Now func() time.Time
	// Rand is where codes are drawn from; tests inject their own.
	Rand io.Reader
	// Redact cleans a log tail of secrets before it is stored.
	Redact func(string) string
}

// NewStore returns a store over an open state database. Text it stores is
// cleaned of token shapes and of the values of this process's secret
// environment variables (the phone password among them).
func NewStore(db *state.DB) *Store {
	return &Store{db: db, Now: time.Now, Rand: randReader, Redact: redact.FromEnv(os.Environ()).String}
}

// DB returns the underlying state database.
func (s *Store) DB() *state.DB { return s.db }

// maxDraws bounds the redraws after code collisions; reaching it means the
// random source is broken, not bad luck.
const maxDraws = 100

// Create records a new problem and, in the same transaction, the email it owes.
func (s *Store) Create(ctx context.Context, n New) (Code, error) {
	var code Code
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		code, err = s.CreateTx(ctx, tx, n)
		return err
	})
	return code, err
}

// CreateTx is Create inside the caller's transaction, so a task's state and
// its problem change together.
func (s *Store) CreateTx(ctx context.Context, tx *sql.Tx, n New) (Code, error) {
	if !n.Kind.Valid() {
		return "", fmt.Errorf("creating a problem: unknown kind %q", n.Kind)
	}
	if strings.TrimSpace(n.Repo) == "" {
		return "", errors.New("creating a problem: no repository")
	}
	summary := noSep(strings.Join(strings.Fields(s.Redact(n.Summary)), " "))
	if summary == "" {
		return "", errors.New("creating a problem: empty summary")
	}
	replies := n.Replies
	if len(replies) == 0 {
		replies = n.Kind.Replies()
	}
	for _, r := range replies {
		if !contains(Kinds[n.Kind], r) {
			return "", fmt.Errorf("creating a problem: a %s problem cannot offer %s", n.Kind, r)
		}
	}
	now := state.Now(s.Now())
	for range maxDraws {
		code, err := newCode(s.Rand)
		if err != nil {
			return "", err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO problems
			(code, repo, job, task, kind, summary, detail, log_tail, replies, state, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
			code, noSep(n.Repo), noSep(n.Job), noSep(n.Task), n.Kind, summary, noSep(s.Redact(n.Detail)), s.Redact(n.LogTail), joinVerbs(replies), now, now)
		if isUniqueCode(err) {
			continue // a collision: draw again
		}
		if err != nil {
			return "", fmt.Errorf("storing problem: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return "", err
		}
		if err := enqueueTx(ctx, tx, OutboxProblem, id, 0, "", now); err != nil {
			return "", err
		}
		return code, nil
	}
	return "", fmt.Errorf("creating a problem: %d code draws all collided; the random source is broken", maxDraws)
}

func isUniqueCode(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed: problems.code")
}

// Columns of a problem row; the log tail and the decision are read only
// where they are needed, since listings of thousands of rows feel each column.
const (
	baseColumns     = `p.id, p.code, p.repo, p.job, p.task, p.kind, p.summary, p.detail, p.replies, p.state, p.created_at, p.updated_at`
	logColumn       = `, p.log_tail`
	decisionColumns = `, d.id, d.reply, d.words, d.channel, d.who, d.source_id, d.created_at, d.applied_at, d.outcome`
	decisionJoin    = ` LEFT JOIN decisions d ON d.problem_id = p.id`
	fullSelect      = "SELECT " + baseColumns + logColumn + decisionColumns + " FROM problems p" + decisionJoin
)

type scanner interface{ Scan(dest ...any) error }

func scanProblem(row scanner, withLog, withDecision bool) (*Problem, error) {
	var p Problem
	var replies, created, updated string
	var did sql.NullInt64
	var reply, words, channel, who, source, dat, applied, outcome sql.NullString
	dest := []any{&p.id, &p.Code, &p.Repo, &p.Job, &p.Task, &p.Kind, &p.Summary, &p.Detail, &replies, &p.State, &created, &updated}
	if withLog {
		dest = append(dest, &p.LogTail)
	}
	if withDecision {
		dest = append(dest, &did, &reply, &words, &channel, &who, &source, &dat, &applied, &outcome)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	p.Replies = splitVerbs(replies)
	p.CreatedAt, p.UpdatedAt = state.ParseTime(created), state.ParseTime(updated)
	if did.Valid {
		p.Decision = &Decision{ID: did.Int64, ProblemID: p.id, Code: p.Code, Reply: Verb(reply.String), Words: words.String,
			Channel: Channel(channel.String), Who: who.String, SourceID: source.String,
			At: state.ParseTime(dat.String), AppliedAt: state.ParseTime(applied.String), Outcome: outcome.String}
	}
	return &p, nil
}

// Get returns one problem with its decision, if any.
func (s *Store) Get(ctx context.Context, code Code) (*Problem, error) {
	return getProblem(ctx, s.db, code)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getProblem(ctx context.Context, q querier, code Code) (*Problem, error) {
	p, err := scanProblem(q.QueryRowContext(ctx, fullSelect+" WHERE p.code = ?", code), true, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{Code: code}
	}
	if err != nil {
		return nil, fmt.Errorf("reading problem %s: %w", code, err)
	}
	return p, nil
}

// Filter chooses which problems List returns.
type Filter struct {
	// Repo limits the list to one repository.
	Repo string
	// Job limits the list to one job.
	Job string
	// States limits the list to these states; empty means open only.
	States []State
	// All lists every state.
	All bool
	// WithLog fills LogTail, which listings usually leave out.
	WithLog bool
}

// List returns problems, oldest first.
func (s *Store) List(ctx context.Context, f Filter) ([]*Problem, error) {
	var where []string
	var args []any
	if f.Repo != "" {
		where = append(where, "p.repo = ?")
		args = append(args, f.Repo)
	}
	if f.Job != "" {
		where = append(where, "p.job = ?")
		args = append(args, f.Job)
	}
	if !f.All {
		states := f.States
		if len(states) == 0 {
			states = []State{Open}
		}
		marks := make([]string, len(states))
		for i, st := range states {
			marks[i] = "?"
			args = append(args, st)
		}
		where = append(where, "p.state IN ("+strings.Join(marks, ",")+")")
	}
	// Open problems have no decision yet, so the join is skipped for them.
	withDecision := f.All
	for _, st := range f.States {
		withDecision = withDecision || st != Open
	}
	q := "SELECT " + packedColumns
	if f.WithLog {
		q += logColumn
	}
	if withDecision {
		q += decisionColumns + " FROM problems p" + decisionJoin
	} else {
		q += " FROM problems p"
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY p.id"
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing problems: %w", err)
	}
	defer rows.Close()
	var out []*Problem
	for rows.Next() {
		p, err := scanPacked(rows, f.WithLog, withDecision)
		if err != nil {
			return nil, fmt.Errorf("listing problems: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// packedColumns reads a problem's base columns as one text value. The
// driver's cost is per column read, and a listing of thousands of rows feels
// it (10,000 open problems: about 60 ms as twelve columns, half that as one).
// Fields are joined by the unit separator, which CreateTx keeps out of every
// stored text; the two free texts come last.
const packedColumns = `p.id || char(31) || p.code || char(31) || p.repo || char(31) || p.job || char(31) || p.task || char(31) ||
	p.kind || char(31) || p.replies || char(31) || p.state || char(31) || p.created_at || char(31) || p.updated_at || char(31) ||
	p.summary || char(31) || p.detail`

const unitSep = "\x1f"

func scanPacked(row scanner, withLog, withDecision bool) (*Problem, error) {
	var packed string
	var did sql.NullInt64
	var reply, words, channel, who, source, dat, applied, outcome sql.NullString
	var p Problem
	dest := []any{&packed}
	if withLog {
		dest = append(dest, &p.LogTail)
	}
	if withDecision {
		dest = append(dest, &did, &reply, &words, &channel, &who, &source, &dat, &applied, &outcome)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	f := strings.SplitN(packed, unitSep, 12)
	if len(f) != 12 {
		return nil, fmt.Errorf("a problem row has %d fields, not 12", len(f))
	}
	id, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("a problem row's id %q: %w", f[0], err)
	}
	p.id, p.Code, p.Repo, p.Job, p.Task, p.Kind = id, Code(f[1]), f[2], f[3], f[4], Kind(f[5])
	p.Replies, p.State = splitVerbs(f[6]), State(f[7])
	p.CreatedAt, p.UpdatedAt = state.ParseTime(f[8]), state.ParseTime(f[9])
	p.Summary, p.Detail = f[10], f[11]
	if did.Valid {
		p.Decision = &Decision{ID: did.Int64, ProblemID: p.id, Code: p.Code, Reply: Verb(reply.String), Words: words.String,
			Channel: Channel(channel.String), Who: who.String, SourceID: source.String,
			At: state.ParseTime(dat.String), AppliedAt: state.ParseTime(applied.String), Outcome: outcome.String}
	}
	return &p, nil
}

// noSep keeps the unit separator out of stored text (see packedColumns).
func noSep(s string) string { return strings.ReplaceAll(s, unitSep, " ") }

func joinVerbs(vs []Verb) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, " ")
}

func splitVerbs(s string) []Verb {
	fields := strings.Fields(s)
	out := make([]Verb, len(fields))
	for i, f := range fields {
		out[i] = Verb(f)
	}
	return out
}

func contains(vs []Verb, v Verb) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
