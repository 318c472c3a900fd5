package mailbot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/agentkit/agentkit/secrets"
)

// inboxName is the mailbox the bot watches.
const inboxName = "INBOX"

// errIMAPTimeout is a command the server did not answer in time; the
// connection is closed and made again.
var errIMAPTimeout = errors.New("no answer from the IMAP server in time")

// imapConn is one logged-in IMAP connection.
type imapConn struct {
	c *imapclient.Client
	// newMail is signalled (never blocking) by the unilateral-data handler
	// when the server reports a new message count.
	newMail chan struct{}
	timeout time.Duration
	stop    func() bool
	caps    imap.CapSet
	// permanent lists the flags the server keeps for the selected mailbox.
	permanent []imap.Flag
	// uidValidity is the selected mailbox's UIDVALIDITY.
	uidValidity uint32
}

// openIMAP connects, secures and logs in. The password goes to LOGIN (or
// AUTHENTICATE PLAIN where LOGIN is disabled) and nowhere else.
func openIMAP(ctx context.Context, d dialer, s Server, pw secrets.Password, timeout time.Duration) (*imapConn, error) {
	conn, tc, err := dialServer(ctx, d, s, "IMAP")
	if err != nil {
		return nil, err
	}
	ic := &imapConn{newMail: make(chan struct{}, 1), timeout: timeout}
	opts := &imapclient.Options{
		TLSConfig: tc,
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			// It runs on the client's reader: it only signals.
			Mailbox: func(data *imapclient.UnilateralDataMailbox) {
				if data.NumMessages != nil {
					ic.signalNewMail()
				}
			},
		},
	}
	if s.TLS == TLSStartTLS {
		done := make(chan struct{})
		timer := time.AfterFunc(timeout, func() { conn.Close() })
		var err error
		go func() {
			defer close(done)
			ic.c, err = imapclient.NewStartTLS(conn, opts)
		}()
		<-done
		timer.Stop()
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("STARTTLS with the IMAP server %s (check the port and tls mode; a private CA needs ca_file): %w", s.Addr(), err)
		}
	} else {
		ic.c = imapclient.New(conn, opts)
	}
	ic.stop = context.AfterFunc(ctx, func() { ic.c.Close() })
	fail := func(err error) (*imapConn, error) {
		ic.close()
		return nil, err
	}
	if err := ic.within("waiting for the greeting", ic.c.WaitGreeting); err != nil {
		return fail(fmt.Errorf("the IMAP server %s: %w", s.Addr(), err))
	}
	if err := ic.within("reading capabilities", func() error {
		if ic.caps = ic.c.Caps(); ic.caps == nil {
			return errors.New("the server sent no capabilities")
		}
		return nil
	}); err != nil {
		return fail(fmt.Errorf("the IMAP server %s: %w", s.Addr(), err))
	}
	login := func() error { return ic.c.Login(s.Username, pw.Reveal()).Wait() }
	if ic.caps.Has(imap.CapLoginDisabled) {
		login = func() error { return ic.c.Authenticate(sasl.NewPlainClient("", s.Username, pw.Reveal())) }
	}
	if err := ic.within("logging in", login); err != nil {
		return fail(fmt.Errorf("logging in to the IMAP server %s as %s (check the username and the password: agentkit phone setup): %w", s.Addr(), s.Username, err))
	}
	// Capabilities often grow after login.
	ic.caps = ic.c.Caps()
	return ic, nil
}

func (ic *imapConn) signalNewMail() {
	select {
	case ic.newMail <- struct{}{}:
	default:
	}
}

// canIdle reports whether the server offers IDLE.
func (ic *imapConn) canIdle() bool { return ic.caps.Has(imap.CapIdle) }

// within waits for a command, closing the connection when the server does
// not answer in time: a half-dead connection would otherwise wait forever.
func (ic *imapConn) within(what string, wait func() error) error {
	var fired atomic.Bool
	t := time.AfterFunc(ic.timeout, func() {
		fired.Store(true)
		ic.c.Close()
	})
	err := wait()
	t.Stop()
	if fired.Load() {
		return fmt.Errorf("%s: %w (%s)", what, errIMAPTimeout, ic.timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (ic *imapConn) close() {
	if ic.stop != nil {
		ic.stop()
	}
	_ = ic.c.Close()
}

// logout ends the session politely, then closes it.
func (ic *imapConn) logout() {
	_ = ic.within("logging out", func() error { return ic.c.Logout().Wait() })
	ic.close()
}

// selectInbox selects the watched mailbox.
func (ic *imapConn) selectInbox() (*imap.SelectData, error) {
	var data *imap.SelectData
	err := ic.within("selecting "+inboxName, func() error {
		var err error
		data, err = ic.c.Select(inboxName, nil).Wait()
		return err
	})
	if err != nil {
		return nil, err
	}
	ic.permanent, ic.uidValidity = data.PermanentFlags, data.UIDValidity
	return data, nil
}

// ensureFolder creates the processed-messages folder when it is missing.
func (ic *imapConn) ensureFolder(name string) error {
	var found bool
	err := ic.within("looking for folder "+name, func() error {
		list, err := ic.c.List("", name, nil).Collect()
		found = len(list) > 0
		return err
	})
	if err != nil || found {
		return err
	}
	return ic.within("creating folder "+name, func() error { return ic.c.Create(name, nil).Wait() })
}

// messageMeta is what is read of a message before deciding to download it.
type messageMeta struct {
	uid          uint32
	size         int64
	internalDate time.Time
	flags        []imap.Flag
}

func (m messageMeta) has(flag imap.Flag) bool {
	for _, f := range m.flags {
		if equalFoldASCII(string(f), string(flag)) {
			return true
		}
	}
	return false
}

// listAfter returns the messages with a UID above last, in UID order. "N:*"
// always includes the highest message even when its UID is lower, so the
// result is filtered here.
func (ic *imapConn) listAfter(last uint32) ([]messageMeta, error) {
	if mb := ic.c.Mailbox(); mb != nil && mb.NumMessages == 0 {
		return nil, nil
	}
	var set imap.UIDSet
	set.AddRange(imap.UID(last+1), 0)
	var bufs []*imapclient.FetchMessageBuffer
	err := ic.within("listing new messages", func() error {
		var err error
		bufs, err = ic.c.Fetch(set, &imap.FetchOptions{UID: true, Flags: true, RFC822Size: true, InternalDate: true}).Collect()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]messageMeta, 0, len(bufs))
	for _, b := range bufs {
		if uint32(b.UID) <= last {
			continue
		}
		out = append(out, messageMeta{uid: uint32(b.UID), size: b.RFC822Size, internalDate: b.InternalDate, flags: b.Flags})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].uid < out[j].uid })
	return out, nil
}

// fetchBodies downloads whole messages by UID.
func (ic *imapConn) fetchBodies(uids []uint32) (map[uint32][]byte, error) {
	set := uidSet(uids)
	section := &imap.FetchItemBodySection{Peek: true}
	var bufs []*imapclient.FetchMessageBuffer
	err := ic.within("downloading messages", func() error {
		var err error
		bufs, err = ic.c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[uint32][]byte, len(bufs))
	for _, b := range bufs {
		if body := b.FindBodySection(section); body != nil {
			out[uint32(b.UID)] = body
		}
	}
	return out, nil
}

// envelope reads only the envelope of a message (for one too big to download).
func (ic *imapConn) envelope(uid uint32) (*imap.Envelope, error) {
	var bufs []*imapclient.FetchMessageBuffer
	err := ic.within("reading an envelope", func() error {
		var err error
		bufs, err = ic.c.Fetch(uidSet([]uint32{uid}), &imap.FetchOptions{UID: true, Envelope: true}).Collect()
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, b := range bufs {
		if uint32(b.UID) == uid {
			return b.Envelope, nil
		}
	}
	return nil, nil
}

// mark flags processed messages (\Seen and the keyword), or moves them to
// the folder when one is configured.
func (ic *imapConn) mark(uids []uint32, keyword, folder string) error {
	if len(uids) == 0 {
		return nil
	}
	set := uidSet(uids)
	if folder != "" {
		return ic.within("moving processed messages to "+folder, func() error {
			_, err := ic.c.Move(set, folder).Wait()
			return err
		})
	}
	flags := []imap.Flag{imap.FlagSeen}
	if ic.keepsKeyword(imap.Flag(keyword)) {
		flags = append(flags, imap.Flag(keyword))
	}
	return ic.within("flagging processed messages", func() error {
		return ic.c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: flags}, nil).Close()
	})
}

// keepsKeyword reports whether the mailbox accepts the keyword permanently.
func (ic *imapConn) keepsKeyword(k imap.Flag) bool {
	for _, f := range ic.permanent {
		if f == imap.FlagWildcard || equalFoldASCII(string(f), string(k)) {
			return true
		}
	}
	return false
}

// noop checks that the connection still answers (and collects updates).
func (ic *imapConn) noop() error {
	return ic.within("checking the connection (NOOP)", func() error { return ic.c.Noop().Wait() })
}

// idleEnd says why an IDLE ended without error.
type idleEnd int

const (
	idleStopped idleEnd = iota // the context ended
	idleNewMail                // the server reported new mail
	idleWoken                  // someone asked for a look
	idleRestart                // time to restart it (and check the connection)
)

// idle runs IDLE until new mail, a wake-up, the restart interval or the
// context's end, then ends it and waits for the server's answer. No other
// command is sent while it runs. An error means the connection is gone.
func (ic *imapConn) idle(ctx context.Context, restart time.Duration, wake <-chan struct{}) (idleEnd, error) {
	var cmd *imapclient.IdleCommand
	if err := ic.within("starting IDLE", func() error {
		var err error
		cmd, err = ic.c.Idle()
		return err
	}); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(restart)
	defer timer.Stop()
	var why idleEnd
	select {
	case err := <-done:
		if err == nil {
			err = errors.New("the server ended IDLE")
		}
		return 0, fmt.Errorf("the IMAP connection ended during IDLE: %w", err)
	case <-ctx.Done():
		why = idleStopped
	case <-ic.newMail:
		why = idleNewMail
	case <-wake:
		why = idleWoken
	case <-timer.C:
		why = idleRestart
	}
	closeErr := cmd.Close()
	err := ic.within("ending IDLE", func() error { return <-done })
	if err == nil && closeErr != nil {
		err = closeErr
	}
	return why, err
}

func uidSet(uids []uint32) imap.UIDSet {
	var set imap.UIDSet
	for _, u := range uids {
		set.AddNum(imap.UID(u))
	}
	return set
}

func equalFoldASCII(a, b string) bool { return asciiLower(a) == asciiLower(b) }
