package mailbot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/problems"
)

// processor turns inbound messages into stored verdicts, decisions and owed
// answers, each message in one transaction.
type processor struct {
	db     *state.DB
	store  *problems.Store
	cfg    *Config
	decide inboundDecider
	now    func() time.Time
	log    *slog.Logger
	// owed is called after a commit that owes the owner an answer.
	owed func()
	// afterStore, when set, runs after each commit and before the message
	// is marked on the server (a test stops the process there).
	afterStore func(uid uint32)
}

// inboundMessage is one message as the watcher read it.
type inboundMessage struct {
	key          mailboxKey
	uidValidity  uint32
	uid          uint32
	size         int64
	internalDate time.Time
	// raw is nil when the message is over the size limit and was not downloaded.
	raw      []byte
	envelope *imap.Envelope
}

// handling says what the watcher does with a message after processing.
type handling int

const (
	// handledNew: decided and stored now; mark it.
	handledNew handling = iota
	// handledKnown: decided before (a restart, a rescan); only mark it.
	handledKnown
	// handledLater: not decided (a temporary failure); leave it unmarked.
	handledLater
)

// handle decides one message and stores the outcome. An error means the
// store failed; the message is then left for the next pass.
func (p *processor) handle(ctx context.Context, m inboundMessage) (handling, error) {
	known, err := inboundKnown(ctx, p.db, m.key, m.uidValidity, m.uid)
	if err != nil {
		return handledLater, err
	}
	if known {
		return handledKnown, nil
	}
	if m.raw == nil {
		return handledNew, p.storeOversize(ctx, m)
	}
	sum := sha256.Sum256(m.raw)
	sha := hex.EncodeToString(sum[:])
	if id := quickMessageID(m.raw); id != "" {
		copyOf, err := inboundCopy(ctx, p.db, id, sha)
		if err != nil {
			return handledLater, err
		}
		if copyOf {
			p.log.Info("message already decided under another UID; marking it only", slog.String("message_id", id), slog.Uint64("uid", uint64(m.uid)))
			return handledKnown, nil
		}
	}
	j, err := p.decide.decide(ctx, m.raw, m.internalDate)
	if err != nil {
		return handledLater, fmt.Errorf("deciding about message UID %d: %w", m.uid, err)
	}
	if j.Temporary {
		p.log.Info("a message cannot be decided now; trying again later", slog.Uint64("uid", uint64(m.uid)), slog.String("reason", j.Reason))
		return handledLater, nil
	}
	if err := p.apply(ctx, m, sha, j); err != nil {
		return handledLater, err
	}
	return handledNew, nil
}

// storeOversize records a message over max_message_bytes as refused, from
// its envelope alone.
func (p *processor) storeOversize(ctx context.Context, m inboundMessage) error {
	row := inboundRow{key: m.key, uidValidity: m.uidValidity, uid: m.uid, size: m.size, internalDate: m.internalDate, outcome: string(doRefuse),
		reason: fmt.Sprintf("too large: %d bytes, over max_message_bytes (%d); not downloaded", m.size, p.cfg.MaxMessageBytes)}
	if e := m.envelope; e != nil {
		row.messageID, row.subject = e.MessageID, e.Subject
		if len(e.From) > 0 {
			row.sender = e.From[0].Addr()
		}
	}
	now := p.now()
	err := p.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := insertInbound(ctx, tx, row, now)
		return err
	})
	if err == nil {
		p.log.Info("message refused", slog.Uint64("uid", uint64(m.uid)), slog.String("reason", row.reason))
	}
	return err
}

// apply stores a judgement in one transaction: the phone-log row, what is
// remembered as processed, the decision or pause, and any answer owed.
func (p *processor) apply(ctx context.Context, m inboundMessage, sha string, j judgement) error {
	now := p.now()
	var owe bool
	var final judgement
	var decision *problems.Decision
	err := p.db.Tx(ctx, func(tx *sql.Tx) error {
		j := j // a retried transaction starts from the verdict again
		owe, decision = false, nil
		if !j.Authenticated && j.Action != doIgnore && j.Action != doRefuse {
			j.Action, j.Reason = doRefuse, "not authenticated: "+j.Reason
		}
		if j.Authenticated && (j.Action == doObey || j.Action == doControl || j.Action == doAnswer) {
			seen, err := processedAny(ctx, tx, j.MessageID, j.Signatures)
			if err != nil {
				return err
			}
			if seen {
				j.Action, j.Reason = doRefuse, "replayed: its Message-ID or DKIM signature was processed before"
			}
		}
		ans := answerPayload{To: j.From, Subject: j.Subject, InReplyTo: j.MessageID, References: j.References}
		var problemID int64
		switch j.Action {
		case doObey:
			d, pid, err := answerTx(ctx, tx, now, j.Code, problems.Answer{Reply: j.Reply, Channel: problems.Email, Who: j.From, SourceID: j.MessageID})
			problemID = pid
			if r, ok := asRefusal(err); ok {
				j.Action, j.Why, j.Fix, j.Reason = doAnswer, r.why, r.fix, "not allowed: "+r.why
			} else if err != nil {
				return err
			} else {
				decision = d
			}
		case doControl:
			k, err := p.control(ctx, tx, now, &j)
			if err != nil {
				return err
			}
			if k != "" {
				ans.Kind, ans.Repo, owe = k, j.Repo, true
			}
		}
		if j.Action == doAnswer {
			ans.Kind, ans.Why, ans.Fix, owe = answerRefused, j.Why, j.Fix, true
		}
		outcome := string(j.Action)
		if j.Action == doControl {
			outcome = string(doObey)
		}
		row := inboundRow{key: m.key, uidValidity: m.uidValidity, uid: m.uid, messageID: j.MessageID, sha: sha, sender: j.From, subject: j.Subject,
			size: int64(len(m.raw)), internalDate: m.internalDate, outcome: outcome, reason: j.Reason, code: j.Code, verdict: string(j.Record)}
		if decision != nil {
			row.decisionID = decision.ID
		}
		id, err := insertInbound(ctx, tx, row, now)
		if err != nil {
			return err
		}
		if j.Authenticated {
			if err := insertProcessed(ctx, tx, id, j.MessageID, j.Signatures, now); err != nil {
				return err
			}
		}
		if owe {
			if err := p.store.EnqueueTx(ctx, tx, problems.OutboxAnswer, problemID, 0, ans.encode()); err != nil {
				return err
			}
		}
		final = j
		return nil
	})
	if err != nil {
		return err
	}
	attrs := []any{slog.Uint64("uid", uint64(m.uid)), slog.String("from", final.From), slog.String("outcome", string(final.Action))}
	switch {
	case decision != nil:
		p.log.Info("reply obeyed", append(attrs, slog.String("code", string(final.Code)), slog.String("reply", string(final.Reply.Verb)))...)
	case final.Action == doControl:
		p.log.Info("command obeyed", append(attrs, slog.String("command", string(final.Control)), slog.String("repo", final.Repo))...)
	default:
		p.log.Info("message not obeyed", append(attrs, slog.String("reason", final.Reason))...)
	}
	if owe && p.owed != nil {
		p.owed()
	}
	return nil
}

// control runs a command without a code inside the transaction and returns
// the answer it owes ("" when it turned into a refusal, set on j).
func (p *processor) control(ctx context.Context, tx *sql.Tx, now time.Time, j *judgement) (answerKind, error) {
	switch j.Control {
	case ctlStatus:
		return answerStatus, nil
	case ctlHelp:
		return answerHelp, nil
	case ctlPause, ctlResume:
		if j.Repo != "" {
			ok, err := repoExists(ctx, tx, j.Repo)
			if err != nil {
				return "", err
			}
			if !ok {
				j.Action, j.Why, j.Fix = doAnswer, fmt.Sprintf("No repository is named %q.", j.Repo), "Reply \"status\" to see the names, or leave the name out to act on every repository."
				j.Reason = "not allowed: unknown repository " + j.Repo
				return "", nil
			}
		}
		paused := j.Control == ctlPause
		if err := setPausedTx(ctx, tx, now, j.Repo, paused, j.From, problems.Email); err != nil {
			return "", err
		}
		if paused {
			return answerPaused, nil
		}
		return answerResumed, nil
	}
	j.Action, j.Why, j.Fix, j.Reason = doAnswer, fmt.Sprintf("%q is not a command.", j.Control), "", "not allowed: unknown command"
	return "", nil
}

// refusal is a reply the owner gets told about: why, and what would work.
type refusal struct{ why, fix string }

// asRefusal turns the problems store's refusals into an answer's words.
func asRefusal(err error) (refusal, bool) {
	var nf *problems.NotFoundError
	var no *problems.NotOpenError
	var nof *problems.NotOfferedError
	switch {
	case err == nil:
		return refusal{}, false
	case errors.As(err, &nf):
		return refusal{fmt.Sprintf("No problem has the code %s.", nf.Code), "Check the code in the problem's email, or reply \"status\" to list the open problems."}, true
	case errors.As(err, &no):
		why := fmt.Sprintf("Problem %s is %s; it needs no answer now.", no.Code, no.State)
		if d := no.Decision; d != nil {
			why = fmt.Sprintf("Problem %s was already answered %q by %s (%s).", no.Code, problems.Reply{Verb: d.Reply, Words: d.Words}.String(), d.Who, d.Channel)
		}
		return refusal{why, "Reply \"status\" to list the open problems."}, true
	case errors.As(err, &nof):
		return refusal{fmt.Sprintf("Problem %s cannot be fixed by %s.", nof.Code, nof.Reply), "Reply with one of: " + offeredList(nof.Offered) + "."}, true
	case errors.Is(err, errStoreFailed):
		return refusal{}, false
	}
	// The remaining errors of answerTx are about the reply's words.
	return refusal{err.Error() + ".", "For example: hint use the v2 API"}, true
}

// errStoreFailed marks errors of the store itself, which are retried rather
// than answered.
var errStoreFailed = errors.New("mailbot: state store failed")

// quickMessageID reads the first Message-ID field without parsing the body.
func quickMessageID(raw []byte) string {
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return ""
	}
	mh := mail.Header{Header: message.Header{Header: h}}
	id, err := mh.MessageID()
	if err != nil {
		return ""
	}
	return id
}
