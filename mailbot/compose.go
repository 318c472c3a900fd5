package mailbot

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
)

// errUnrenderable marks a row that can never become an email (its problem is
// gone, its payload unreadable): it is failed, not retried.
var errUnrenderable = errors.New("mailbot: cannot render")

// composer renders outbox rows into messages when they are sent, so the
// problems package never needs to know what an email looks like.
type composer struct {
	db    *state.DB
	store *problems.Store
	cfg   *Config
	now   func() time.Time
	rand  io.Reader
	// known holds secret values that must never appear in an email.
	known []string
}

// composed is one message ready for SMTP.
type composed struct {
	to   string
	data []byte
}

// newMessageID draws a Message-ID under the bot's domain.
func (c *composer) newMessageID(r *outboxRow, code problems.Code) (string, error) {
	var nonce [8]byte
	if _, err := io.ReadFull(c.rand, nonce[:]); err != nil {
		return "", fmt.Errorf("drawing a Message-ID: %w", err)
	}
	tag := string(r.kind)
	if code != "" {
		tag = string(code)
	}
	return fmt.Sprintf("agentkit.%s.%d.%s@%s", tag, r.id, hex.EncodeToString(nonce[:]), messageIDDomain(c.cfg)), nil
}

// compose renders a row; a first attempt also fixes its Message-ID and Date.
func (c *composer) compose(ctx context.Context, r *outboxRow) (composed, error) {
	var p *problems.Problem
	if r.problemID != 0 {
		var err error
		if p, err = c.problemByID(ctx, r.problemID); err != nil {
			return composed{}, err
		}
	}
	var code problems.Code
	if p != nil {
		code = p.Code
	}
	if r.messageID == "" {
		id, err := c.newMessageID(r, code)
		if err != nil {
			return composed{}, err
		}
		if err := assignMessageID(ctx, c.db, r, id, c.now()); err != nil {
			return composed{}, err
		}
	}
	env := envelope{From: c.cfg.BotAddress, To: c.cfg.OwnerAddresses[0], MessageID: r.messageID, Date: r.msgDate}
	var body string
	switch r.kind {
	case problems.OutboxProblem:
		if p == nil {
			return composed{}, fmt.Errorf("outbox row %d owes a problem email but names no problem: %w", r.id, errUnrenderable)
		}
		env.Subject = ProblemSubject(p)
		body = problemBody(p, c.cfg.BotAddress, c.cfg.OwnerAddresses, c.known...)
	case problems.OutboxConfirmation:
		if p == nil || p.Decision == nil {
			return composed{}, fmt.Errorf("outbox row %d owes a confirmation but names no decided problem: %w", r.id, errUnrenderable)
		}
		env.Subject = replySubject(ProblemSubject(p))
		env.InReplyTo, env.References = c.confirmationThread(ctx, p)
		body = confirmationBody(p, p.Decision, c.cfg.OwnerAddresses)
	case problems.OutboxAnswer:
		a, err := decodeAnswer(r.payload)
		if err != nil {
			return composed{}, fmt.Errorf("outbox row %d: %w: %w", r.id, err, errUnrenderable)
		}
		if c.cfg.IsOwner(a.To) {
			env.To = a.To
		}
		env.Subject = replySubject(orText(a.Subject, subjectTag))
		env.InReplyTo, env.References = a.thread()
		if body, err = c.answerBody(ctx, a); err != nil {
			return composed{}, err
		}
	case problems.OutboxJobDone:
		j := parseJobDone(r.payload)
		env.Subject = jobDoneSubject(j)
		body = jobDoneBody(j, c.cfg.OwnerAddresses, c.known...)
	default:
		return composed{}, fmt.Errorf("outbox row %d has unknown kind %q: %w", r.id, r.kind, errUnrenderable)
	}
	data, err := buildMessage(env, body)
	if err != nil {
		return composed{}, err
	}
	return composed{to: env.To, data: data}, nil
}

// confirmationThread threads a confirmation under the problem's email and the
// reply that decided it.
func (c *composer) confirmationThread(ctx context.Context, p *problems.Problem) (inReplyTo, refs []string) {
	if id, err := problemMessageID(ctx, c.db, p.ID()); err == nil && id != "" {
		refs = append(refs, id)
	}
	if d := p.Decision; d != nil && d.Channel == problems.Email && d.SourceID != "" {
		refs = append(refs, d.SourceID)
	}
	if len(refs) > 0 {
		inReplyTo = refs[len(refs)-1:]
	}
	return inReplyTo, refs
}

func (c *composer) answerBody(ctx context.Context, a answerPayload) (string, error) {
	help := helpText(c.cfg.OwnerAddresses, c.cfg.AnswersPerHour)
	switch a.Kind {
	case answerRefused:
		return refusedBody(a, help), nil
	case answerHelp:
		return help, nil
	case answerPaused, answerResumed:
		return pauseBody(a), nil
	case answerStatus:
		st, err := status.Read(ctx, c.db)
		if err != nil {
			return "", fmt.Errorf("reading the status to answer with: %w", err)
		}
		open, err := c.store.List(ctx, problems.Filter{})
		if err != nil {
			return "", fmt.Errorf("reading open problems to answer with: %w", err)
		}
		return statusBody(st, open, c.now()), nil
	}
	return "", fmt.Errorf("an owed answer of unknown kind %q: %w", a.Kind, errUnrenderable)
}

func (c *composer) problemByID(ctx context.Context, id int64) (*problems.Problem, error) {
	var code problems.Code
	if err := c.db.QueryRowContext(ctx, "SELECT code FROM problems WHERE id = ?", id).Scan(&code); err != nil {
		return nil, fmt.Errorf("reading problem %d for its email: %w: %w", id, err, errUnrenderable)
	}
	return c.store.Get(ctx, code)
}

// domainPart returns the part of an address after its last "@".
func domainPart(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return strings.ToLower(addr[i+1:])
	}
	return strings.ToLower(addr)
}
