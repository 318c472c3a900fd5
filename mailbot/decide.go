package mailbot

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-message/textproto"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// newVerdictDecider wires the decision (Decide: verification, trimming, the
// command grammar) to the transport, with the store as its Facts.
func newVerdictDecider(o Options, p *processor) inboundDecider {
	domain := messageIDDomain(p.cfg)
	lookup := o.LookupTXT
	return inboundDeciderFunc(func(ctx context.Context, raw []byte, internalDate time.Time) (judgement, error) {
		facts := &storeFacts{q: p.stmts.onDB(), domain: domain, ctx: ctx}
		v, err := Decide(raw, internalDate, p.cfg, Deps{Now: o.Now, LookupTXT: lookup, Facts: facts})
		if err != nil {
			return judgement{}, err
		}
		return judgementOf(v, raw), nil
	})
}

// judgementOf turns a Verdict into what the transport acts on.
func judgementOf(v Verdict, raw []byte) judgement {
	j := judgement{MessageID: v.MessageID, From: v.From, Subject: v.Subject, Authenticated: v.Remember, Reason: v.Reason}
	if v.StoppedBy != "" {
		j.Reason = v.StoppedBy + ": " + v.Reason
	}
	if v.Signature != "" {
		j.Signatures = []string{v.Signature}
	}
	j.Record, _ = json.Marshal(v) // plain data: cannot fail
	switch v.Outcome {
	case OutcomeIgnore:
		j.Action = doIgnore
	case OutcomeRetry:
		j.Action, j.Temporary = doRefuse, true
	case OutcomeAnswer:
		j.Action, j.Why = doAnswer, capitalise(v.Reason)+"."
		j.References = threadIDs(raw)
	case OutcomeAct:
		j.References = threadIDs(raw)
		c := v.Command
		if c == nil {
			j.Action, j.Reason = doRefuse, "internal: an act verdict without a command"
			break
		}
		if c.Verb.NeedsCode() {
			j.Action, j.Code = doObey, problems.Code(c.Code)
			j.Reply = problems.Reply{Verb: problems.Verb(c.Verb), Words: c.Words}
			break
		}
		j.Action = doControl
		switch c.Verb {
		case VerbStatus:
			j.Control = ctlStatus
		case VerbHelp:
			j.Control = ctlHelp
		case VerbPause:
			j.Control, j.Repo = ctlPause, c.Words
		case VerbResume:
			j.Control, j.Repo = ctlResume, c.Words
		default:
			j.Control = ctlCommand(c.Verb)
		}
	default:
		j.Action = doRefuse
	}
	return j
}

// threadIDs returns the References (and In-Reply-To) of a message, oldest
// first, for threading an answer under it.
func threadIDs(raw []byte) []string {
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil
	}
	ids := msgIDList(h.Get("References"))
	for _, id := range msgIDList(h.Get("In-Reply-To")) {
		if !contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// messageIDDomain is the domain of the bot's Message-IDs: a subdomain of the
// bot's own that no mail client of the owner writes, so the bot recognises
// its own messages.
func messageIDDomain(cfg *Config) string { return "agentkit." + domainPart(cfg.BotAddress) }

// storeFacts answers the decision's questions from the state store.
type storeFacts struct {
	q      runner
	domain string
	// ctx is the context of the message being decided.
	ctx context.Context
}

var _ Facts = (*storeFacts)(nil)

func (f *storeFacts) context() context.Context {
	if f.ctx == nil {
		return context.Background()
	}
	return f.ctx
}

// IsProcessed reports whether the Message-ID was processed before.
func (f *storeFacts) IsProcessed(messageID string) (bool, error) {
	if messageID == "" {
		return false, nil
	}
	return processedAny(f.context(), f.q, messageID, nil)
}

// IsProcessedSignature reports whether the DKIM b= value was processed before.
func (f *storeFacts) IsProcessedSignature(b string) (bool, error) {
	if b == "" {
		return false, nil
	}
	return processedAny(f.context(), f.q, "", []string{b})
}

// ProblemByMessageID returns the code of the problem an email of the bot's
// (the problem's own, a confirmation, an answer about it) was about.
func (f *storeFacts) ProblemByMessageID(messageID string) (string, bool, error) {
	var code string
	err := f.q.QueryRowContext(f.context(), `SELECT p.code FROM outbox o JOIN problems p ON p.id = o.problem_id
		WHERE o.message_id = ? ORDER BY o.id LIMIT 1`, messageID).Scan(&code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("looking up the thread of %s: %w", messageID, err)
	}
	return code, true, nil
}

// OwnMessageIDDomain is the domain of the bot's Message-IDs.
func (f *storeFacts) OwnMessageIDDomain() string { return f.domain }

// NewStoreFacts answers the decision's questions from the state store, read
// only, for `agentkit phone check` and `phone test`: the same facts the
// running bot uses.
func NewStoreFacts(ctx context.Context, db *state.DB, cfg *Config) Facts {
	return &storeFacts{q: db.DB, domain: messageIDDomain(cfg), ctx: ctx}
}
