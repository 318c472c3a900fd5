package mailbot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/secrets"
)

// Delivery retry policy.
const (
	// retryFirst is the wait after a message's first temporary failure; it
	// doubles up to retryMax.
	retryFirst = 30 * time.Second
	retryMax   = 30 * time.Minute
	// giveUpAfter fails a message that has only met temporary failures for
	// this long: by then the owner needs to see it in `phone status`.
	giveUpAfter = 72 * time.Hour
	// maxIdleWait bounds how long the sender sleeps without a reason, so a
	// clock that jumps (suspend, a test's clock) is noticed.
	maxIdleWait = time.Minute
)

// retryDelay is the wait after the n-th consecutive temporary failure (n ≥ 1).
func retryDelay(n int) time.Duration {
	d := retryFirst
	for i := 1; i < n && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// sender delivers the outbox over SMTP, at least once per row.
type sender struct {
	db     *state.DB
	cfg    *Config
	pw     secrets.Password
	comp   *composer
	dial   dialer
	now    func() time.Time
	log    *slog.Logger
	wake   chan struct{}
	passMu sync.Mutex // one delivery pass at a time

	// Session-level trouble (unreachable, TLS, login) holds every row back
	// without counting against any of them.
	downUntil time.Time
	failures  int
}

// Delivery reports what one pass over the outbox did.
type Delivery struct {
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Retried int `json:"retried"`
	// Capped counts answers held back by answers_per_hour.
	Capped int `json:"capped"`
	// Next is when a waiting row is due (zero when none waits).
	Next time.Time `json:"next,omitzero"`
	// Err is why the server could not be used this pass.
	Err error `json:"-"`
}

// signal asks the running loop for a pass soon; it never blocks.
func (s *sender) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers whenever rows are due or a signal arrives, until ctx ends.
func (s *sender) run(ctx context.Context) {
	for {
		d, err := s.pass(ctx, false)
		if err != nil && ctx.Err() == nil {
			s.log.Error("delivering the outbox", slog.Any("error", err))
		}
		wait := maxIdleWait
		if !d.Next.IsZero() {
			wait = min(max(d.Next.Sub(s.now()), 0), maxIdleWait)
		}
		if err != nil {
			wait = max(wait, retryFirst) // a store error: do not spin on it
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// pass sends every due row once. An error means the store could not be
// used; server trouble is recorded on the rows and in Delivery.Err.
//
// A forced pass (the owner asked) tries every waiting row now, whatever its
// backoff; the answer cap still holds.
func (s *sender) pass(ctx context.Context, force bool) (Delivery, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	var d Delivery
	now := s.now()
	until := now
	if force {
		s.downUntil = time.Time{}
		until = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	due, next, err := dueRows(ctx, s.db, until)
	if err != nil {
		return d, err
	}
	d.Next = next
	later := func(t time.Time) {
		if d.Next.IsZero() || t.Before(d.Next) {
			d.Next = t
		}
	}
	if len(due) == 0 {
		return d, nil
	}
	if now.Before(s.downUntil) {
		later(s.downUntil)
		return d, nil
	}
	capped, firstCapped, err := cappedSentSince(ctx, s.db, now.Add(-time.Hour))
	if err != nil {
		return d, err
	}
	var sess *smtpSession
	defer func() {
		if sess != nil {
			sess.close()
		}
	}()
	for i := range due {
		r := &due[i]
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		if isCapped(r.kind) && capped >= s.cfg.AnswersPerHour {
			if force && r.nextAttempt.After(now) {
				later(r.nextAttempt)
				continue // already held by the cap: leave its slot as it is
			}
			// The next slot frees when the oldest counted answer leaves the hour.
			free := firstCapped.Add(time.Hour)
			words := fmt.Sprintf("waiting: %d automatic answers were sent in the last hour (answers_per_hour is %d)", capped, s.cfg.AnswersPerHour)
			if err := markRetry(ctx, s.db, r.id, free, words, false); err != nil {
				return d, err
			}
			d.Capped++
			later(free)
			continue
		}
		msg, err := s.comp.compose(ctx, r)
		if errors.Is(err, errUnrenderable) {
			s.log.Error("an owed email cannot be written; marking it failed", slog.Int64("outbox_id", r.id), slog.String("kind", string(r.kind)), slog.Any("error", err))
			if err := markFailed(ctx, s.db, r.id, err.Error()); err != nil {
				return d, err
			}
			d.Failed++
			continue
		}
		if err != nil {
			return d, err
		}
		if sess == nil {
			if sess, err = openSMTP(ctx, s.dial, s.cfg.SMTP, s.pw); err != nil {
				if ctx.Err() != nil {
					return d, ctx.Err()
				}
				s.sessionDown(ctx, due[i:], now, err)
				d.Err = err
				later(s.downUntil)
				return d, nil
			}
			s.sessionUp()
		}
		err = sess.send(s.cfg.BotAddress, msg.to, msg.data)
		now = s.now()
		if err == nil {
			if err := markSent(ctx, s.db, r.id, now); err != nil {
				return d, err
			}
			s.log.Info("email sent", slog.Int64("outbox_id", r.id), slog.String("kind", string(r.kind)), slog.String("message_id", r.messageID))
			d.Sent++
			if isCapped(r.kind) {
				if capped == 0 {
					firstCapped = now
				}
				capped++
			}
			continue
		}
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		f := classifySMTP(err)
		switch {
		case f.permanent:
			s.log.Warn("the SMTP server refused an email", slog.Int64("outbox_id", r.id), slog.String("kind", string(r.kind)), slog.String("server", f.words))
			if err := markFailed(ctx, s.db, r.id, f.words); err != nil {
				return d, err
			}
			d.Failed++
		case now.Sub(r.createdAt) > giveUpAfter:
			words := fmt.Sprintf("gave up after %s of temporary failures; last: %s", giveUpAfter, f.words)
			if err := markFailed(ctx, s.db, r.id, words); err != nil {
				return d, err
			}
			d.Failed++
		default:
			at := now.Add(retryDelay(r.attempts + 1))
			s.log.Warn("an email will be sent again", slog.Int64("outbox_id", r.id), slog.String("kind", string(r.kind)), slog.String("server", f.words), slog.Time("next_attempt", at))
			if err := markRetry(ctx, s.db, r.id, at, f.words, true); err != nil {
				return d, err
			}
			d.Retried++
			later(at)
		}
		if !f.sessionOK || sess.reset() != nil {
			sess.close()
			sess = nil
		}
	}
	return d, nil
}

// sessionDown records why the server could not be used on the rows it held
// back (without counting an attempt) and backs off.
func (s *sender) sessionDown(ctx context.Context, rows []outboxRow, now time.Time, cause error) {
	s.failures++
	s.downUntil = now.Add(retryDelay(s.failures))
	if s.failures == 1 {
		s.log.Warn("the SMTP server cannot be used; owed email waits", slog.Any("error", cause), slog.Time("next_attempt", s.downUntil))
	} else {
		s.log.Debug("the SMTP server still cannot be used", slog.Any("error", cause), slog.Time("next_attempt", s.downUntil))
	}
	for _, r := range rows {
		if err := markRetry(ctx, s.db, r.id, s.downUntil, cause.Error(), false); err != nil {
			s.log.Error("recording an SMTP failure", slog.Any("error", err))
			return
		}
	}
}

func (s *sender) sessionUp() {
	if s.failures > 0 {
		s.log.Info("the SMTP server can be used again", slog.Int("failed_attempts", s.failures))
	}
	s.failures, s.downUntil = 0, time.Time{}
}
