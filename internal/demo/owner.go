package demo

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-msgauth/dkim"
)

// owner is the demo's owner: an address whose mail provider signs outgoing
// mail with DKIM, with a key made for this run, and the DNS that publishes
// that key (mailbot.Options.LookupTXT), so the bot's real verification runs
// without a network.
type owner struct {
	Address  string
	Name     string
	Domain   string
	Selector string
	key      ed25519.PrivateKey
}

func newOwner() (*owner, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("making the demo owner's DKIM key: %w", err)
	}
	return &owner{Address: "owner@owner.example", Name: "Owner", Domain: "owner.example", Selector: "phone", key: key}, nil
}

// RecordName is the DNS name of the owner's DKIM key.
func (o *owner) RecordName() string { return o.Selector + "._domainkey." + o.Domain }

// LookupTXT is the demo's DNS: it answers the query for the owner's DKIM key
// and nothing else.
func (o *owner) LookupTXT(name string) ([]string, error) {
	if strings.EqualFold(strings.TrimSuffix(name, "."), o.RecordName()) {
		pub := o.key.Public().(ed25519.PublicKey)
		return []string{"v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// reply is a message the owner's phone sends.
type reply struct {
	To, Subject, Body string
}

// tap is what a phone's mail app writes when the owner taps a mailto: link
// and presses send: the link's address, subject and words, with the phone's
// signature line below.
func tap(link string) (reply, error) {
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "mailto" || u.Opaque == "" {
		return reply{}, fmt.Errorf("%q is not a mailto: link", link)
	}
	to, err := url.PathUnescape(u.Opaque)
	if err != nil {
		return reply{}, fmt.Errorf("reading the address of %q: %w", link, err)
	}
	q := u.Query()
	return reply{To: to, Subject: q.Get("subject"), Body: q.Get("body") + "\n\nSent from my phone\n"}, nil
}

// Compose writes r as a raw message (CRLF line ends) from the owner, signed
// by the owner's provider when signed is set.
func (o *owner) Compose(r reply, at time.Time, signed bool) ([]byte, error) {
	var b bytes.Buffer
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", fmt.Sprintf("%s <%s>", o.Name, o.Address))
	header("To", r.To)
	header("Subject", mime.QEncoding.Encode("utf-8", r.Subject))
	header("Date", at.Format(time.RFC1123Z))
	header("Message-ID", "<"+randomID()+"@mail."+o.Domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(r.Body, "\r\n", "\n"), "\n", "\r\n"))
	if !signed {
		return b.Bytes(), nil
	}
	var out bytes.Buffer
	err := dkim.Sign(&out, &b, &dkim.SignOptions{
		Domain: o.Domain, Selector: o.Selector, Signer: o.key,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed, BodyCanonicalization: dkim.CanonicalizationRelaxed,
		HeaderKeys: []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"},
	})
	if err != nil {
		return nil, fmt.Errorf("signing the owner's reply: %w", err)
	}
	return out.Bytes(), nil
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
