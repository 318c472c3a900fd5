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
	"runtime"
	"sync"
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
	// stmts keeps the inbound path's statements prepared.
	stmts *stmtCache
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

// decideWorkers is how many messages of a batch are decided at once.
var decideWorkers = max(1, runtime.GOMAXPROCS(0))

// decidedMessage is a message with its verdict, waiting to be stored.
type decidedMessage struct {
	index    int
	m        inboundMessage
	sha      string
	j        judgement
	oversize bool
	// filled in by the transaction
	stored storedOutcome
}

// storedOutcome is what the transaction made of a judgement.
type storedOutcome struct {
	final    judgement
	decision *problems.Decision
	owe      bool
	reason   string // for an oversized message
}

// handleBatch decides messages (in UID order) and stores every decision in
// one transaction, then says what to do with each on the server. An error
// means the store failed; the decisions made before it are still stored,
// and the rest are left for the next pass.
func (p *processor) handleBatch(ctx context.Context, msgs []inboundMessage) ([]handling, error) {
	out := make([]handling, len(msgs))
	for i := range out {
		out[i] = handledLater
	}
	if len(msgs) == 0 {
		return out, nil
	}
	known, err := inboundKnownUIDs(ctx, p.db, msgs[0].key, msgs[0].uidValidity, msgs[0].uid, msgs[len(msgs)-1].uid)
	if err != nil {
		return out, err
	}
	// Cheap checks first, in order: known by place, or the same bytes
	// under another UID (a rescan).
	var todo []*decidedMessage
	var failure error
	for i, m := range msgs {
		if known[m.uid] {
			out[i] = handledKnown
			continue
		}
		if m.raw == nil {
			todo = append(todo, &decidedMessage{index: i, m: m, oversize: true})
			continue
		}
		sum := sha256.Sum256(m.raw)
		d := &decidedMessage{index: i, m: m, sha: hex.EncodeToString(sum[:])}
		if id := quickMessageID(m.raw); id != "" {
			copyOf, err := inboundCopy(ctx, p.stmts.onDB(), id, d.sha)
			if err != nil {
				failure = err
				break
			}
			if copyOf {
				p.log.Info("message already decided under another UID; marking it only", slog.String("message_id", id), slog.Uint64("uid", uint64(m.uid)))
				out[i] = handledKnown
				continue
			}
		}
		todo = append(todo, d)
	}
	// The decisions (MIME, DKIM, trimming, grammar) run in parallel: they
	// only read the store.
	errs := make([]error, len(todo))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(decideWorkers, len(todo)) {
		wg.Go(func() {
			for k := range work {
				d := todo[k]
				if !d.oversize {
					d.j, errs[k] = p.decide.decide(ctx, d.m.raw, d.m.internalDate)
				}
			}
		})
	}
	for k := range todo {
		work <- k
	}
	close(work)
	wg.Wait()
	// Stored in UID order up to the first failure; undecidable ones wait.
	kept := todo[:0]
	for k, d := range todo {
		if errs[k] != nil {
			if failure == nil {
				failure = fmt.Errorf("deciding about message UID %d: %w", d.m.uid, errs[k])
			}
			break
		}
		if d.j.Temporary {
			if age := p.now().Sub(d.m.internalDate); age <= p.cfg.MaxAge.D() {
				p.log.Info("a message cannot be decided now; trying again later", slog.Uint64("uid", uint64(d.m.uid)), slog.String("reason", d.j.Reason))
				continue
			}
			// Undecidable for longer than any reply is obeyed: give up.
			d.j.Temporary, d.j.Action = false, doRefuse
			d.j.Reason = "gave up: it could not be decided for max_age (" + d.j.Reason + ")"
		}
		kept = append(kept, d)
	}
	todo = kept
	if len(todo) > 0 {
		now := p.now()
		err := p.db.Tx(ctx, func(sqltx *sql.Tx) error {
			tx := p.stmts.in(sqltx)
			batch := map[string]bool{}
			for _, d := range todo {
				var err error
				if d.oversize {
					d.stored, err = p.storeOversizeTx(ctx, tx, d.m, now)
				} else {
					d.stored, err = p.applyTx(ctx, tx, d.m, d.sha, d.j, now, batch)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		owe := false
		for _, d := range todo {
			out[d.index] = handledNew
			p.logStored(d)
			owe = owe || d.stored.owe
		}
		if owe && p.owed != nil {
			p.owed()
		}
	}
	return out, failure
}

// storeOversizeTx records a message over max_message_bytes as refused, from
// its envelope alone.
func (p *processor) storeOversizeTx(ctx context.Context, tx preparedTx, m inboundMessage, now time.Time) (storedOutcome, error) {
	row := inboundRow{key: m.key, uidValidity: m.uidValidity, uid: m.uid, size: m.size, internalDate: m.internalDate, outcome: string(doRefuse),
		reason: fmt.Sprintf("too large: %d bytes, over max_message_bytes (%d); not downloaded", m.size, p.cfg.MaxMessageBytes)}
	if e := m.envelope; e != nil {
		row.messageID, row.subject = e.MessageID, e.Subject
		if len(e.From) > 0 {
			row.sender = e.From[0].Addr()
		}
	}
	_, err := insertInbound(ctx, tx, row, now)
	return storedOutcome{final: judgement{Action: doRefuse, From: row.sender}, reason: row.reason}, err
}

func (p *processor) logStored(d *decidedMessage) {
	f := d.stored.final
	attrs := []any{slog.Uint64("uid", uint64(d.m.uid)), slog.String("from", f.From), slog.String("outcome", string(f.Action))}
	switch {
	case d.oversize:
		p.log.Info("message refused", append(attrs, slog.String("reason", d.stored.reason))...)
	case d.stored.decision != nil:
		p.log.Info("reply obeyed", append(attrs, slog.String("code", string(f.Code)), slog.String("reply", string(f.Reply.Verb)))...)
	case f.Action == doControl:
		p.log.Info("command obeyed", append(attrs, slog.String("command", string(f.Control)), slog.String("repo", f.Repo))...)
	default:
		p.log.Info("message not obeyed", append(attrs, slog.String("reason", f.Reason))...)
	}
}

// applyTx stores a judgement inside tx: the phone-log row, what is
// remembered as processed, the decision or pause, and any answer owed.
// batch holds the Message-IDs and signatures stored earlier in the same
// transaction, which the decision (reading committed state) cannot see.
func (p *processor) applyTx(ctx context.Context, tx preparedTx, m inboundMessage, sha string, j judgement, now time.Time, batch map[string]bool) (storedOutcome, error) {
	var res storedOutcome
	if !j.Authenticated && j.Action != doIgnore && j.Action != doRefuse {
		j.Action, j.Reason = doRefuse, "not authenticated: "+j.Reason
	}
	if j.Authenticated {
		keys := []string{"id " + j.MessageID}
		for _, s := range j.Signatures {
			keys = append(keys, "b "+s)
		}
		replay := false
		for _, k := range keys {
			replay = replay || batch[k]
			batch[k] = true
		}
		if replay && (j.Action == doObey || j.Action == doControl || j.Action == doAnswer) {
			j.Action, j.Reason = doRefuse, "replayed: its Message-ID or DKIM signature came in an earlier message"
		}
	}
	ans := answerPayload{To: j.From, Subject: j.Subject, InReplyTo: j.MessageID, References: j.References}
	var problemID int64
	switch j.Action {
	case doObey:
		d, err := p.store.AnswerTx(ctx, tx, j.Code, problems.Answer{Reply: j.Reply, Channel: problems.Email, Who: j.From, SourceID: j.MessageID})
		if d != nil {
			problemID = d.ProblemID
		} else if id, lerr := problemIDOf(ctx, tx, j.Code, err); lerr != nil {
			return res, lerr
		} else {
			problemID = id
		}
		if r, ok := asRefusal(err); ok {
			j.Action, j.Why, j.Fix, j.Reason = doAnswer, r.why, r.fix, "not allowed: "+r.why
		} else if err != nil {
			return res, err
		} else {
			res.decision = d
		}
	case doControl:
		k, err := p.control(ctx, tx, now, &j)
		if err != nil {
			return res, err
		}
		if k != "" {
			ans.Kind, ans.Repo, res.owe = k, j.Repo, true
		}
	}
	if j.Action == doAnswer {
		ans.Kind, ans.Why, ans.Fix, res.owe = answerRefused, j.Why, j.Fix, true
	}
	outcome := string(j.Action)
	if j.Action == doControl {
		outcome = string(doObey)
	}
	row := inboundRow{key: m.key, uidValidity: m.uidValidity, uid: m.uid, messageID: j.MessageID, sha: sha, sender: j.From, subject: j.Subject,
		size: int64(len(m.raw)), internalDate: m.internalDate, outcome: outcome, reason: j.Reason, code: j.Code, verdict: string(j.Record)}
	if res.decision != nil {
		row.decisionID = res.decision.ID
	}
	id, err := insertInbound(ctx, tx, row, now)
	if err != nil {
		return res, err
	}
	if j.Authenticated {
		if err := insertProcessed(ctx, tx, id, j.MessageID, j.Signatures, now); err != nil {
			return res, err
		}
	}
	if res.owe {
		if err := p.store.EnqueueTx(ctx, tx.tx, problems.OutboxAnswer, problemID, 0, ans.encode()); err != nil {
			return res, err
		}
	}
	res.final = j
	return res, nil
}

// control runs a command without a code inside the transaction and returns
// the answer it owes ("" when it turned into a refusal, set on j).
func (p *processor) control(ctx context.Context, tx runner, now time.Time, j *judgement) (answerKind, error) {
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
		if err := p.store.SetPausedTx(ctx, tx, j.Repo, paused, j.From, problems.Email); err != nil {
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
	case errors.Is(err, problems.ErrStore):
		return refusal{}, false
	}
	// The remaining errors of AnswerTx are about the reply's words.
	return refusal{err.Error() + ".", "For example: hint use the v2 API"}, true
}

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
