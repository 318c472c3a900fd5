package mailbot

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/secrets"
)

// Watcher defaults.
const (
	// DefaultIdleRestart restarts IDLE well before providers drop idle
	// clients (some after ~10 minutes; go-imap itself restarts only at 28).
	DefaultIdleRestart = 9 * time.Minute
	// DefaultCommandTimeout bounds every IMAP command; a server that does
	// not answer in time is treated as gone.
	DefaultCommandTimeout = 2 * time.Minute
	// retryUndecided is when a message that could not be decided (a DNS
	// failure) is tried again.
	retryUndecided = time.Minute
	// Downloads are batched by count and by bytes.
	batchMessages = 200
	batchBytes    = 8 << 20
)

// DefaultReconnectDelay is the wait before the n-th consecutive reconnect
// (n ≥ 1): 1s doubling to 5 minutes, forever.
func DefaultReconnectDelay(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// watcher reads the mailbox and hands each new message to the processor.
type watcher struct {
	db          *state.DB
	cfg         *Config
	pw          secrets.Password
	dial        dialer
	proc        *processor
	key         mailboxKey
	log         *slog.Logger
	now         func() time.Time
	wake        chan struct{}
	idleRestart time.Duration
	cmdTimeout  time.Duration
	reconnect   func(n int) time.Duration

	retryMu    sync.Mutex
	retryTimer *time.Timer
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// scheduleRetry wakes the watcher later for an undecided message.
func (w *watcher) scheduleRetry() {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	if w.retryTimer == nil {
		w.retryTimer = time.AfterFunc(retryUndecided, func() {
			w.retryMu.Lock()
			w.retryTimer = nil
			w.retryMu.Unlock()
			w.signal()
		})
	}
}

// run watches until ctx ends, reconnecting with backoff for ever and logging
// each outage once.
func (w *watcher) run(ctx context.Context) {
	defer func() {
		w.retryMu.Lock()
		if w.retryTimer != nil {
			w.retryTimer.Stop()
		}
		w.retryMu.Unlock()
	}()
	failures := 0
	var downSince time.Time
	for {
		err := w.session(ctx, func() {
			if failures > 0 {
				w.log.Info("the mailbox is reachable again", slog.Int("failed_attempts", failures), slog.Duration("down_for", w.now().Sub(downSince).Round(time.Second)))
			}
			failures = 0
		})
		if ctx.Err() != nil {
			return
		}
		failures++
		if failures == 1 {
			downSince = w.now()
			w.log.Warn("the mailbox cannot be read; reconnecting until it answers", slog.String("account", w.key.account), slog.Any("error", err))
		} else {
			w.log.Debug("the mailbox still cannot be read", slog.Int("attempt", failures), slog.Any("error", err))
		}
		if err := saveMailboxDown(ctx, w.db, w.key, err.Error(), w.now()); err != nil && ctx.Err() == nil {
			w.log.Error("recording the mailbox outage", slog.Any("error", err))
		}
		t := time.NewTimer(w.reconnect(failures))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// session runs one connection: select, catch up, then wait for mail with
// IDLE (or by polling) and catch up again, until an error or ctx ends.
func (w *watcher) session(ctx context.Context, ready func()) error {
	ic, err := openIMAP(ctx, w.dial, w.cfg.IMAP, w.pw, w.cmdTimeout)
	if err != nil {
		return err
	}
	defer func() {
		if ctx.Err() == nil {
			ic.logout()
		} else {
			ic.close()
		}
	}()
	sel, err := ic.selectInbox()
	if err != nil {
		return err
	}
	st, err := loadMailbox(ctx, w.db, w.key)
	if err != nil {
		return err
	}
	if st.uidValidity != sel.UIDValidity {
		if st.uidValidity != 0 {
			w.log.Warn("the mailbox's UIDVALIDITY changed; reading it again from the start (messages already decided are recognised and only marked)",
				slog.Uint64("was", uint64(st.uidValidity)), slog.Uint64("now", uint64(sel.UIDValidity)))
		}
		st = mailboxState{uidValidity: sel.UIDValidity}
		if err := saveMailboxUIDs(ctx, w.db, w.key, st, w.now()); err != nil {
			return err
		}
	}
	if f := w.cfg.ProcessedFolder; f != "" {
		if err := ic.ensureFolder(f); err != nil {
			return err
		}
	}
	idle := ic.canIdle()
	if err := saveMailboxReached(ctx, w.db, w.key, idle, w.now()); err != nil {
		return err
	}
	first := true
	for {
		if err := w.catchUp(ctx, ic, &st); err != nil {
			return err
		}
		if first {
			ready()
			first = false
		}
		if ctx.Err() != nil {
			return nil
		}
		if idle {
			why, err := ic.idle(ctx, w.idleRestart, w.wake)
			if err != nil {
				return err
			}
			switch why {
			case idleStopped:
				return nil
			case idleRestart:
				// The watchdog: a connection that still answers is alive.
				if err := ic.noop(); err != nil {
					return err
				}
				if err := saveMailboxReached(ctx, w.db, w.key, true, w.now()); err != nil {
					return err
				}
			}
			continue
		}
		t := time.NewTimer(w.cfg.PollInterval.D())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
		if err := ic.noop(); err != nil {
			return err
		}
		if err := saveMailboxReached(ctx, w.db, w.key, false, w.now()); err != nil {
			return err
		}
	}
}

// catchUp processes every message above the last processed UID, in UID
// order and in batches: download, decide and store each, then mark the
// batch on the server and advance the stored UID past what is done.
func (w *watcher) catchUp(ctx context.Context, ic *imapConn, st *mailboxState) error {
	metas, err := ic.listAfter(st.lastUID)
	if err != nil {
		return err
	}
	keyword := imap.Flag(w.cfg.ProcessedKeyword)
	contiguous := true
	for start := 0; start < len(metas); {
		end, bytes := start, int64(0)
		for end < len(metas) && end-start < batchMessages && (bytes < batchBytes || end == start) {
			if metas[end].size <= w.cfg.MaxMessageBytes {
				bytes += metas[end].size
			}
			end++
		}
		batch := metas[start:end]
		start = end
		var fetch []uint32
		for _, m := range batch {
			if m.size <= w.cfg.MaxMessageBytes && !w.alreadyMarked(m, keyword) {
				fetch = append(fetch, m.uid)
			}
		}
		var bodies map[uint32][]byte
		if len(fetch) > 0 {
			if bodies, err = ic.fetchBodies(fetch); err != nil {
				return err
			}
		}
		// What each listed message needs: nothing (marked before, or gone),
		// or a decision.
		var msgs []inboundMessage
		for _, m := range batch {
			if w.alreadyMarked(m, keyword) {
				continue
			}
			in := inboundMessage{key: w.key, uidValidity: ic.uidValidity, uid: m.uid, size: m.size, internalDate: m.internalDate}
			if m.size > w.cfg.MaxMessageBytes {
				if in.envelope, err = ic.envelope(m.uid); err != nil {
					return err
				}
			} else if in.raw = bodies[m.uid]; in.raw == nil {
				continue // expunged between listing and downloading
			}
			msgs = append(msgs, in)
		}
		results, failure := w.proc.handleBatch(ctx, msgs)
		outcome := map[uint32]handling{}
		for i, in := range msgs {
			outcome[in.uid] = results[i]
			if results[i] == handledNew && w.proc.afterStore != nil {
				w.proc.afterStore(in.uid)
			}
		}
		var marks []uint32
		advance := st.lastUID
		for _, m := range batch {
			h, decided := outcome[m.uid]
			if decided && h == handledLater {
				contiguous = false
				if failure == nil {
					w.scheduleRetry()
				}
				continue
			}
			if decided {
				marks = append(marks, m.uid)
			}
			if contiguous {
				advance = m.uid
			}
		}
		// Marking comes only after the decisions are committed, so a crash
		// here leaves stored messages unmarked: the next pass finds them
		// known and only marks them.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := ic.mark(marks, w.cfg.ProcessedKeyword, w.cfg.ProcessedFolder); err != nil {
			return err
		}
		if advance > st.lastUID {
			st.lastUID = advance
			if err := saveMailboxUIDs(ctx, w.db, w.key, *st, w.now()); err != nil {
				return err
			}
		}
		if failure != nil {
			return fmt.Errorf("processing the mailbox: %w", failure)
		}
	}
	return nil
}

// alreadyMarked reports whether a message carries the processed keyword
// (only meaningful when messages are flagged, not moved).
func (w *watcher) alreadyMarked(m messageMeta, keyword imap.Flag) bool {
	return w.cfg.ProcessedFolder == "" && m.has(keyword)
}
