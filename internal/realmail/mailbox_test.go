package realmail_test

import (
	"bytes"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/agentkit/agentkit/internal/realmail"
)

func TestDeliverAppendAndMessages(t *testing.T) {
	s := realmail.Start(t)
	delivered, deliveredID := newMessage(s.Owner.Address, s.Bot.Address, "delivered", "over LMTP")
	if err := s.Deliver(s.Owner.Address, s.Bot.Address, delivered); err != nil {
		t.Fatal(err)
	}
	appended, appendedID := newMessage(s.Owner.Address, s.Bot.Address, "appended", "over IMAP")
	uid, err := s.Append(s.Bot, "INBOX", []imap.Flag{imap.FlagSeen, "$Replied"}, appended)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Deliver("", "nobody@agentkit.test", delivered); err == nil {
		t.Error("LMTP accepted mail for a mailbox that does not exist")
	}

	msgs, err := s.Messages(s.Bot, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("INBOX holds %d messages, want 2", len(msgs))
	}
	first, second := msgs[0], msgs[1]
	if !bytes.Contains(first.Raw, []byte("Message-ID: <"+deliveredID+">")) ||
		!bytes.Contains(first.Raw, []byte("Return-Path: <"+s.Owner.Address+">")) ||
		!bytes.Contains(first.Raw, []byte("over LMTP")) {
		t.Errorf("the delivered message reads:\n%s", first.Raw)
	}
	if hasFlag(first.Flags, imap.FlagSeen) {
		t.Errorf("the delivered message has flags %v, want none", first.Flags)
	}
	if second.UID != uid || !bytes.Contains(second.Raw, []byte(appendedID)) ||
		!hasFlag(second.Flags, imap.FlagSeen) || !hasFlag(second.Flags, "$Replied") {
		t.Errorf("the appended message is UID %d with flags %v, want UID %d with \\Seen and $Replied:\n%s",
			second.UID, second.Flags, uid, second.Raw)
	}

	// Messages only peeks: nothing became \Seen.
	again, err := s.Messages(s.Bot, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if hasFlag(again[0].Flags, imap.FlagSeen) {
		t.Error("Messages marked the delivered message \\Seen")
	}
	if owner, err := s.Messages(s.Owner, "INBOX"); err != nil || len(owner) != 0 {
		t.Errorf("the owner's INBOX: %d messages, %v; want none", len(owner), err)
	}
}
