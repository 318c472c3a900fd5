package realmail

import (
	"fmt"
	"net"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"
)

// deliverTimeout bounds one LMTP delivery or IMAP append.
const deliverTimeout = 30 * time.Second

// Deliver hands msg to Dovecot over LMTP for the mailbox to, as Postfix
// does, and returns once Dovecot has stored it in to's INBOX. from is the
// envelope sender, which Dovecot records as Return-Path; "" is the null
// sender. msg is a complete message, headers first, lines ending in CRLF.
func (s *Servers) Deliver(from, to string, msg []byte) error {
	conn, err := net.DialTimeout("tcp", s.LMTPAddr, deliverTimeout)
	if err != nil {
		return fmt.Errorf("realmail: delivering to %s: connecting to Dovecot's LMTP: %w", to, err)
	}
	_ = conn.SetDeadline(time.Now().Add(deliverTimeout))
	c := smtp.NewClientLMTP(conn)
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("realmail: delivering to %s: LHLO: %w", to, err)
	}
	if err := c.Mail(from, nil); err != nil {
		return fmt.Errorf("realmail: delivering to %s: MAIL FROM: %w", to, err)
	}
	if err := c.Rcpt(to, nil); err != nil {
		return fmt.Errorf("realmail: delivering to %s: RCPT TO: %w", to, err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("realmail: delivering to %s: DATA: %w", to, err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("realmail: delivering to %s: writing the message: %w", to, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("realmail: delivering to %s: %w", to, err)
	}
	return c.Quit()
}

// Append stores msg with flags in u's mailbox (such as "INBOX") over IMAP,
// as another mail client of u's would, and returns its UID.
func (s *Servers) Append(u User, mailbox string, flags []imap.Flag, msg []byte) (imap.UID, error) {
	c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{
		TLSConfig: s.TLSConfig(),
		Dialer:    &net.Dialer{Timeout: deliverTimeout},
	})
	if err != nil {
		return 0, fmt.Errorf("realmail: appending to %s of %s: connecting: %w", mailbox, u.Address, err)
	}
	defer c.Close()
	if err := c.Login(u.Address, u.Password).Wait(); err != nil {
		return 0, fmt.Errorf("realmail: appending to %s of %s: logging in: %w", mailbox, u.Address, err)
	}
	cmd := c.Append(mailbox, int64(len(msg)), &imap.AppendOptions{Flags: flags})
	if _, err := cmd.Write(msg); err != nil {
		return 0, fmt.Errorf("realmail: appending to %s of %s: %w", mailbox, u.Address, err)
	}
	if err := cmd.Close(); err != nil {
		return 0, fmt.Errorf("realmail: appending to %s of %s: %w", mailbox, u.Address, err)
	}
	data, err := cmd.Wait()
	if err != nil {
		return 0, fmt.Errorf("realmail: appending to %s of %s: %w", mailbox, u.Address, err)
	}
	_ = c.Logout().Wait()
	return data.UID, nil
}

// Message is one message of a mailbox, as Messages returns it.
type Message struct {
	UID   imap.UID
	Flags []imap.Flag
	Raw   []byte // the whole message, headers first
}

// Messages returns every message in u's mailbox (such as "INBOX"), oldest
// first, without marking any \Seen.
func (s *Servers) Messages(u User, mailbox string) ([]Message, error) {
	c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{
		TLSConfig: s.TLSConfig(),
		Dialer:    &net.Dialer{Timeout: deliverTimeout},
	})
	if err != nil {
		return nil, fmt.Errorf("realmail: reading %s of %s: connecting: %w", mailbox, u.Address, err)
	}
	defer c.Close()
	if err := c.Login(u.Address, u.Password).Wait(); err != nil {
		return nil, fmt.Errorf("realmail: reading %s of %s: logging in: %w", mailbox, u.Address, err)
	}
	data, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return nil, fmt.Errorf("realmail: reading %s of %s: %w", mailbox, u.Address, err)
	}
	if data.NumMessages == 0 {
		return nil, nil
	}
	var all imap.SeqSet
	all.AddRange(1, data.NumMessages)
	whole := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(all, &imap.FetchOptions{
		UID: true, Flags: true, BodySection: []*imap.FetchItemBodySection{whole},
	}).Collect()
	if err != nil {
		return nil, fmt.Errorf("realmail: reading %s of %s: %w", mailbox, u.Address, err)
	}
	msgs := make([]Message, 0, len(bufs))
	for _, b := range bufs {
		msgs = append(msgs, Message{UID: b.UID, Flags: b.Flags, Raw: b.FindBodySection(whole)})
	}
	_ = c.Logout().Wait()
	return msgs, nil
}
