package demo

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/supervisor"
)

// waitFor checks cond until it holds, when mail arrives and every 50ms,
// until ctx ends. An error of the supervisor or the bot ends the wait.
func (r *runner) waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-r.supDone:
			if r.supErr != nil {
				return fmt.Errorf("waiting for %s, the supervisor stopped: %w", what, r.supErr)
			}
		case <-r.botDone:
			if r.botErr != nil {
				return fmt.Errorf("waiting for %s, the mailbot stopped: %w", what, r.botErr)
			}
		default:
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("the demo did not get to %s within %s; this machine may be very busy, try again", what, r.timeout)
			}
			return fmt.Errorf("stopped while waiting for %s: %w", what, ctx.Err())
		case <-r.mail.Arrived():
		case <-tick.C:
		}
	}
}

// waitMail waits for an email of the given kind and returns it.
func (r *runner) waitMail(ctx context.Context, what string, kind problems.OutboxKind) (delivered, error) {
	var found delivered
	err := r.waitFor(ctx, what, func() (bool, error) {
		for _, d := range r.mail.Received() {
			k, _, err := r.outboxKind(ctx, d)
			if err != nil {
				return false, err
			}
			if k == kind {
				found = d
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

// outboxKind says what the outbox owed that an accepted email delivers, by
// its Message-ID, and the code of its problem when it has one.
func (r *runner) outboxKind(ctx context.Context, d delivered) (problems.OutboxKind, problems.Code, error) {
	e, err := readHeader(d.Data)
	if err != nil {
		return "", "", err
	}
	id, err := e.MessageID()
	if err != nil || id == "" {
		return "", "", fmt.Errorf("an email the bot sent has no Message-ID: %v", err)
	}
	var kind, code string
	err = r.db.QueryRowContext(ctx, `SELECT o.kind, coalesce(p.code, '') FROM outbox o LEFT JOIN problems p ON p.id = o.problem_id
		WHERE o.message_id = ?`, id).Scan(&kind, &code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("the bot sent an email (%s) that its outbox does not know", id)
	}
	if err != nil {
		return "", "", fmt.Errorf("reading the outbox: %w", err)
	}
	return problems.OutboxKind(kind), problems.Code(code), nil
}

// readHeader reads the header of a raw message.
func readHeader(raw []byte) (mail.Header, error) {
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return mail.Header{}, fmt.Errorf("reading an email the bot sent: %w", err)
	}
	return mail.Header{Header: ent.Header}, nil
}

// taskStates returns the job's task states by name.
func (r *runner) taskStates(ctx context.Context) (map[string]string, error) {
	js, err := r.job(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range js.Tasks {
		out[t.Name] = t.State
	}
	return out, nil
}

// job returns the demo job's status.
func (r *runner) job(ctx context.Context) (status.JobStatus, error) {
	list, err := status.Jobs(ctx, r.db, r.repo.Name, r.repo.Path, jobName)
	if err != nil {
		return status.JobStatus{}, err
	}
	if len(list) != 1 {
		return status.JobStatus{}, fmt.Errorf("job %s is not in the state store", jobName)
	}
	return list[0], nil
}

// eventsOf returns the supervisor's events of a task so far, from index from.
func (r *runner) eventsOf(task string, from int) []supervisor.Event {
	r.evMu.Lock()
	defer r.evMu.Unlock()
	var out []supervisor.Event
	for _, e := range r.events[min(from, len(r.events)):] {
		if e.Task == task {
			out = append(out, e)
		}
	}
	return out
}

func (r *runner) eventCount() int {
	r.evMu.Lock()
	defer r.evMu.Unlock()
	return len(r.events)
}

func pageFile(task string) string {
	for _, p := range pages {
		if p.Task == task {
			return p.File
		}
	}
	return ""
}
