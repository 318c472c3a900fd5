package phonesetup

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
)

// Inbox is the bot's INBOX, open to wait for one reply. Messages already
// there when it opens are not looked at.
type Inbox struct {
	r    *run
	c    *imapclient.Client
	next imap.UID
	idle bool
	wake chan struct{}
	max  int64
}

// Reply is a message found in the inbox.
type Reply struct {
	UID          imap.UID
	Raw          []byte
	InternalDate time.Time
}

// idleSlice is how long one IDLE runs before it is restarted.
const idleSlice = time.Minute

// OpenInbox logs in and selects INBOX, reporting each step like
// VerifyIMAP. Messages bigger than maxBytes are not downloaded.
func (v *Verifier) OpenInbox(ctx context.Context, s mailbot.Server, pw secrets.Password, maxBytes int64) (*Inbox, error) {
	in := &Inbox{r: &run{v: v, server: "IMAP", flag: "imap", s: s}, wake: make(chan struct{}, 1), max: maxBytes}
	opts := &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		// Only signal: the handler runs inside the client's reader.
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				select {
				case in.wake <- struct{}{}:
				default:
				}
			}
		},
	}}
	c, sel, err := in.r.imapLogin(ctx, pw, opts)
	if err != nil {
		return nil, err
	}
	in.c, in.next = c, sel.UIDNext
	if in.next == 0 {
		in.next = 1
	}
	in.idle = c.Caps().Has(imap.CapIdle)
	return in, nil
}

// Close logs out.
func (in *Inbox) Close() {
	in.r.deadline()
	_ = in.c.Logout().Wait()
	in.c.Close()
	in.r.close()
}

// Wait returns the first new message whose header match accepts, waiting
// with IDLE where the server has it and checking every poll otherwise,
// until ctx ends.
func (in *Inbox) Wait(ctx context.Context, match func(mail.Header) bool, poll time.Duration) (Reply, error) {
	for {
		r, found, err := in.scan(match)
		if err != nil || found {
			return r, err
		}
		if err := in.pause(ctx, poll); err != nil {
			return Reply{}, err
		}
	}
}

// pause waits for new mail, ctx's end, or the next check.
func (in *Inbox) pause(ctx context.Context, poll time.Duration) error {
	if !in.idle {
		t := time.NewTimer(poll)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	in.r.bc.limit(time.Now().Add(idleSlice + in.r.v.timeout()))
	cmd, err := in.c.Idle()
	if err != nil {
		return fmt.Errorf("waiting for mail (IDLE): %w", err)
	}
	t := time.NewTimer(idleSlice)
	defer t.Stop()
	var cerr error
	select {
	case <-ctx.Done():
		cerr = ctx.Err()
	case <-in.wake:
	case <-t.C:
	}
	in.r.deadline()
	if err := cmd.Close(); err != nil && cerr == nil {
		return fmt.Errorf("ending IDLE: %w", err)
	}
	if err := cmd.Wait(); err != nil && cerr == nil {
		return fmt.Errorf("the mailbox connection broke while waiting: %w", err)
	}
	return cerr
}

// scan looks at the messages that arrived since the last scan.
func (in *Inbox) scan(match func(mail.Header) bool) (Reply, bool, error) {
	in.r.deadline()
	data, err := in.c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{{imap.UIDRange{Start: in.next, Stop: 0}}}}, nil).Wait()
	if err != nil {
		return Reply{}, false, fmt.Errorf("looking for new mail: %s", serverWords(err))
	}
	// "N:*" always includes the highest UID, even one below N: filter here.
	var uids []imap.UID
	for _, u := range data.AllUIDs() {
		if u >= in.next {
			uids = append(uids, u)
		}
	}
	if len(uids) == 0 {
		return Reply{}, false, nil
	}
	slices.Sort(uids)
	header := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	in.r.deadline()
	msgs, err := in.c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{header}}).Collect()
	if err != nil {
		return Reply{}, false, fmt.Errorf("reading new mail: %s", serverWords(err))
	}
	slices.SortFunc(msgs, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
	for _, m := range msgs {
		in.next = max(in.next, m.UID+1)
		h, err := mail.ReadMessage(bytes.NewReader(append(m.FindBodySection(header), '\r', '\n')))
		if err != nil || !match(h.Header) {
			continue
		}
		if m.RFC822Size > in.max {
			return Reply{}, true, fmt.Errorf("the reply has %d bytes, more than max_message_bytes (%d) in phone.yaml; reply with the word alone", m.RFC822Size, in.max)
		}
		whole := &imap.FetchItemBodySection{Peek: true}
		in.r.deadline()
		full, err := in.c.Fetch(imap.UIDSetNum(m.UID), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{whole}}).Collect()
		if err != nil || len(full) != 1 {
			return Reply{}, true, fmt.Errorf("downloading the reply: %v", err)
		}
		return Reply{UID: m.UID, Raw: full[0].FindBodySection(whole), InternalDate: m.InternalDate}, true, nil
	}
	return Reply{}, false, nil
}

// MarkProcessed flags a message as the bot flags the ones it has handled,
// so the service does not answer it again later.
func (in *Inbox) MarkProcessed(uid imap.UID, keyword string) error {
	in.r.deadline()
	flags := []imap.Flag{imap.FlagSeen}
	if keyword != "" {
		flags = append(flags, imap.Flag(keyword))
	}
	if err := in.c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: flags}, nil).Close(); err != nil {
		return fmt.Errorf("flagging the reply: %s", serverWords(err))
	}
	return nil
}
