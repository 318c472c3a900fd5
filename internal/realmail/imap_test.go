package realmail_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/agentkit/agentkit/internal/realmail"
)

func TestIMAPLogin(t *testing.T) {
	s := realmail.Start(t)

	t.Run("STARTTLS", func(t *testing.T) {
		c := login(t, s, s.Bot, nil)
		if !c.Caps().Has(imap.CapIdle) {
			t.Errorf("Dovecot does not announce IDLE after login: %v", c.Caps())
		}
		if err := c.Logout().Wait(); err != nil {
			t.Errorf("LOGOUT: %v", err)
		}
	})

	t.Run("implicit TLS", func(t *testing.T) {
		c, err := imapclient.DialTLS(s.IMAPSAddr, &imapclient.Options{TLSConfig: caTLS(t, s)})
		if err != nil {
			t.Fatalf("connecting to Dovecot over TLS: %v", err)
		}
		defer c.Close()
		if err := c.Login(s.Owner.Address, s.Owner.Password).Wait(); err != nil {
			t.Fatalf("logging in as the owner: %v", err)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{TLSConfig: caTLS(t, s)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = c.Login(s.Bot.Address, s.Owner.Password).Wait()
		var imapErr *imap.Error
		if !errors.As(err, &imapErr) || imapErr.Type != imap.StatusResponseTypeNo {
			t.Fatalf("LOGIN with the owner's password for the bot: got %v, want a NO response", err)
		}
	})

	t.Run("certificate not from the CA", func(t *testing.T) {
		// With the system's roots, the throwaway certificate must not pass:
		// the clients above really verified it.
		c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{TLSConfig: &tls.Config{}})
		if err == nil {
			c.Close()
			t.Fatal("STARTTLS verified the test certificate against the system roots")
		}
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Fatalf("STARTTLS without the CA: got %v, want an unknown authority error", err)
		}
	})
}

func TestIMAPIdlePushesNewMessage(t *testing.T) {
	s := realmail.Start(t)
	count := newCounter()
	c := login(t, s, s.Bot, count.handler())
	if data := selectInbox(t, c); data.NumMessages != 0 {
		t.Fatalf("a new INBOX holds %d messages", data.NumMessages)
	}
	idle, err := c.Idle()
	if err != nil {
		t.Fatalf("IDLE: %v", err)
	}
	id := deliver(t, s, s.Bot, "pushed")
	count.waitAtLeast(t, 1) // the EXISTS arrives while IDLE runs
	if err := idle.Close(); err != nil {
		t.Fatalf("ending IDLE: %v", err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatalf("IDLE: %v", err)
	}
	msgs := fetchAll(t, c)
	if len(msgs) != 1 || msgs[0].Envelope == nil || msgs[0].Envelope.MessageID != id {
		t.Fatalf("after the push, INBOX holds %+v, want the message %s", msgs, id)
	}
	if hasFlag(msgs[0].Flags, imap.FlagSeen) {
		t.Errorf("a new message is already \\Seen: %v", msgs[0].Flags)
	}
}

func TestIMAPFlagsAndKeywordsPersist(t *testing.T) {
	const keyword imap.Flag = "$AgentkitHandled"
	s := realmail.Start(t)
	first := deliver(t, s, s.Bot, "to flag")
	second := deliver(t, s, s.Bot, "left alone")

	c := login(t, s, s.Bot, nil)
	data := selectInbox(t, c)
	if !hasFlag(data.PermanentFlags, imap.FlagWildcard) {
		t.Fatalf("PERMANENTFLAGS %v lacks \\*: the server would not keep new keywords", data.PermanentFlags)
	}
	if !hasFlag(data.PermanentFlags, imap.FlagSeen) {
		t.Fatalf("PERMANENTFLAGS %v lacks \\Seen", data.PermanentFlags)
	}
	msgs := fetchAll(t, c)
	if len(msgs) != 2 || msgs[0].Envelope.MessageID != first || msgs[1].Envelope.MessageID != second {
		t.Fatalf("INBOX holds %+v, want %s then %s", msgs, first, second)
	}
	uid := msgs[0].UID
	stored, err := c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{
		Op:    imap.StoreFlagsAdd,
		Flags: []imap.Flag{imap.FlagSeen, keyword},
	}, nil).Collect()
	if err != nil {
		t.Fatalf("UID STORE +FLAGS: %v", err)
	}
	if len(stored) != 1 || !hasFlag(stored[0].Flags, keyword) || !hasFlag(stored[0].Flags, imap.FlagSeen) {
		t.Fatalf("UID STORE answered %+v, want both flags on UID %d", stored, uid)
	}
	c.Close()

	// A new session, and after that a restarted server, still see them.
	check := func(when string) {
		t.Helper()
		c := login(t, s, s.Bot, nil)
		selectInbox(t, c)
		msgs := fetchAll(t, c)
		if len(msgs) != 2 {
			t.Fatalf("%s: INBOX holds %d messages, want 2", when, len(msgs))
		}
		for _, m := range msgs {
			flagged := m.UID == uid
			if hasFlag(m.Flags, keyword) != flagged || hasFlag(m.Flags, imap.FlagSeen) != flagged {
				t.Errorf("%s: UID %d has flags %v; only UID %d should have \\Seen and %s", when, m.UID, m.Flags, uid, keyword)
			}
		}
		found, err := c.UIDSearch(&imap.SearchCriteria{Flag: []imap.Flag{keyword}}, nil).Wait()
		if err != nil {
			t.Fatalf("%s: UID SEARCH KEYWORD: %v", when, err)
		}
		if got := found.AllUIDs(); !slices.Equal(got, []imap.UID{uid}) {
			t.Errorf("%s: UID SEARCH KEYWORD %s found %v, want [%d]", when, keyword, got, uid)
		}
		unseen, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
		if err != nil {
			t.Fatalf("%s: UID SEARCH UNSEEN: %v", when, err)
		}
		if got := unseen.AllUIDs(); !slices.Equal(got, []imap.UID{msgs[1].UID}) {
			t.Errorf("%s: UID SEARCH UNSEEN found %v, want [%d]", when, got, msgs[1].UID)
		}
		c.Close()
	}
	check("after reconnecting")
	s.RestartIMAP(t)
	check("after restarting Dovecot")
}

func TestIMAPUIDsStableAcrossReconnectAndRestart(t *testing.T) {
	s := realmail.Start(t)
	for _, subject := range []string{"one", "two", "three"} {
		deliver(t, s, s.Bot, subject)
	}

	// snapshot is what a client remembers of INBOX: its UIDVALIDITY and the
	// Message-ID behind each UID.
	type snapshot struct {
		validity uint32
		next     imap.UID
		ids      map[imap.UID]string
	}
	take := func(c *imapclient.Client) snapshot {
		t.Helper()
		data := selectInbox(t, c)
		snap := snapshot{validity: data.UIDValidity, next: data.UIDNext, ids: map[imap.UID]string{}}
		for _, m := range fetchAll(t, c) {
			snap.ids[m.UID] = m.Envelope.MessageID
		}
		return snap
	}
	same := func(when string, got, want snapshot) {
		t.Helper()
		if got.validity != want.validity || got.next != want.next || len(got.ids) != len(want.ids) {
			t.Fatalf("%s: UIDVALIDITY %d, UIDNEXT %d, %d messages; want %d, %d, %d",
				when, got.validity, got.next, len(got.ids), want.validity, want.next, len(want.ids))
		}
		for uid, id := range want.ids {
			if got.ids[uid] != id {
				t.Errorf("%s: UID %d is %q, was %q", when, uid, got.ids[uid], id)
			}
		}
	}

	held := login(t, s, s.Bot, nil)
	before := take(held)
	if before.validity == 0 || len(before.ids) != 3 {
		t.Fatalf("UIDVALIDITY %d with %d messages, want nonzero and 3", before.validity, len(before.ids))
	}

	again := login(t, s, s.Bot, nil)
	same("after reconnecting", take(again), before)
	again.Close()

	s.RestartIMAP(t)
	// The restart dropped the session that was open, as a real server's
	// restart does; a client must notice and reconnect.
	select {
	case <-held.Closed():
	default:
		if err := held.Noop().Wait(); err == nil {
			t.Fatal("a session opened before the restart still works after it")
		}
	}
	after := login(t, s, s.Bot, nil)
	same("after restarting Dovecot", take(after), before)

	// New mail after the restart gets a UID above every earlier one.
	id := deliver(t, s, s.Bot, "four")
	if err := after.Noop().Wait(); err != nil { // lets the server announce it
		t.Fatal(err)
	}
	msgs := fetchAll(t, after)
	last := msgs[len(msgs)-1]
	if len(msgs) != 4 || last.Envelope.MessageID != id || last.UID < before.next {
		t.Fatalf("after a new delivery: %d messages, last UID %d (%s); want 4, UID >= %d, %s",
			len(msgs), last.UID, last.Envelope.MessageID, before.next, id)
	}
}
