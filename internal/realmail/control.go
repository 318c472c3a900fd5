package realmail

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
)

// startIMAP starts Dovecot and waits until IMAP, IMAPS, LMTP and the auth
// service answer.
func (s *Servers) startIMAP() error {
	if err := s.dovecot.start(); err != nil {
		return err
	}
	err := s.dovecot.waitReady(
		greets(s.IMAPAddr, nil, "* OK"),
		greets(s.IMAPSAddr, s.TLSConfig(), "* OK"),
		greets(s.LMTPAddr, nil, "220 "),
		greets(s.authAddr, nil, "VERSION\t"),
	)
	if err != nil {
		return portTaken(errors.Join(err, s.dovecot.stop()), s.IMAPAddr, s.IMAPSAddr, s.LMTPAddr, s.authAddr)
	}
	return nil
}

// startSMTP starts Postfix and waits until both submission ports answer.
func (s *Servers) startSMTP() error {
	if err := s.postfix.start(); err != nil {
		return err
	}
	err := s.postfix.waitReady(
		greets(s.SMTPAddr, nil, "220 "),
		greets(s.SMTPSAddr, s.TLSConfig(), "220 "),
	)
	if err != nil {
		return portTaken(errors.Join(err, s.postfix.stop()), s.SMTPAddr, s.SMTPSAddr)
	}
	return nil
}

// errPortTaken marks a start that failed because another process holds one
// of the server's ports.
var errPortTaken = errors.New("realmail: a port of the server is taken")

// portTaken marks err with errPortTaken when one of the addresses cannot be
// bound now: Postfix's master dies of it without logging a word.
func portTaken(err error, addrs ...string) error {
	var busy []string
	for _, addr := range addrs {
		ln, lerr := net.Listen("tcp", addr)
		if lerr != nil {
			busy = append(busy, addr)
			continue
		}
		ln.Close()
	}
	if len(busy) == 0 && !strings.Contains(err.Error(), "Address already in use") {
		return err
	}
	return fmt.Errorf("%w (another process holds %s): %w", errPortTaken, strings.Join(busy, ", "), err)
}

// retryOnPortClash configures and starts a server, again with new ports
// when another process took one of the free ports first.
func retryOnPortClash(configure, start func() error) error {
	var err error
	for range 3 {
		if err = configure(); err != nil {
			return err
		}
		if err = start(); err == nil || !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

// StopIMAP stops Dovecot (IMAP, LMTP and SASL AUTH) and waits until all its
// processes have gone. Mail stays; Postfix queues what it cannot deliver.
func (s *Servers) StopIMAP(t testing.TB) {
	t.Helper()
	if err := s.dovecot.stop(); err != nil {
		t.Fatal(err)
	}
}

// StartIMAP starts Dovecot again, on the same ports and with the same mail,
// after StopIMAP, and waits until it answers.
func (s *Servers) StartIMAP(t testing.TB) {
	t.Helper()
	if err := s.startIMAP(); err != nil {
		t.Fatal(err)
	}
}

// RestartIMAP stops and starts Dovecot, dropping every IMAP connection; UIDs
// and UIDVALIDITY survive, as on a real server.
func (s *Servers) RestartIMAP(t testing.TB) {
	t.Helper()
	s.StopIMAP(t)
	s.StartIMAP(t)
}

// StopSMTP stops Postfix and waits until all its processes have gone;
// submission is refused until StartSMTP. Its queue stays.
func (s *Servers) StopSMTP(t testing.TB) {
	t.Helper()
	if err := s.postfix.stop(); err != nil {
		t.Fatal(err)
	}
}

// StartSMTP starts Postfix again, on the same ports and with the same queue,
// after StopSMTP, and waits until it answers.
func (s *Servers) StartSMTP(t testing.TB) {
	t.Helper()
	if err := s.startSMTP(); err != nil {
		t.Fatal(err)
	}
}

// RestartSMTP stops and starts Postfix.
func (s *Servers) RestartSMTP(t testing.TB) {
	t.Helper()
	s.StopSMTP(t)
	s.StartSMTP(t)
}
