package realmail

import (
	"errors"
	"net"
	"testing"
)

func TestRetryOnPortClash(t *testing.T) {
	var configured, started int
	err := retryOnPortClash(
		func() error { configured++; return nil },
		func() error {
			started++
			if started == 1 {
				return errPortTaken
			}
			return nil
		})
	if err != nil || configured != 2 || started != 2 {
		t.Fatalf("got %v after %d configurations and %d starts, want success after 2 of each", err, configured, started)
	}

	other := errors.New("bad configuration")
	started = 0
	if err := retryOnPortClash(func() error { return nil }, func() error { started++; return other }); err != other || started != 1 {
		t.Fatalf("got %v after %d starts, want the error of the only start", err, started)
	}
}

// TestStartReportsATakenPort starts each real server with a port that
// another listener holds: Dovecot says so, Postfix's master dies silently,
// and both must come out as errPortTaken so that Start picks new ports.
func TestStartReportsATakenPort(t *testing.T) {
	s := Start(t)

	s.StopSMTP(t)
	ln, err := net.Listen("tcp", s.SMTPSAddr)
	if err != nil {
		t.Fatal(err)
	}
	err = s.startSMTP()
	ln.Close()
	if !errors.Is(err, errPortTaken) {
		t.Errorf("Postfix with a taken port: got %v, want errPortTaken", err)
	}
	s.StartSMTP(t)

	s.StopIMAP(t)
	ln, err = net.Listen("tcp", s.IMAPSAddr)
	if err != nil {
		t.Fatal(err)
	}
	err = s.startIMAP()
	ln.Close()
	if !errors.Is(err, errPortTaken) {
		t.Errorf("Dovecot with a taken port: got %v, want errPortTaken", err)
	}
	s.StartIMAP(t)

	free, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	exited := errors.New("exited")
	if err := portTaken(exited, hostPort(free[0])); err != exited {
		t.Errorf("portTaken with a free port: got %v, want the error unchanged", err)
	}
}

func TestDiedReportsAServerThatExitedByItself(t *testing.T) {
	s := Start(t)
	if err := s.dovecot.died(); err != nil {
		t.Fatalf("a running Dovecot: %v", err)
	}
	if err := s.dovecot.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.dovecot.done
	if err := s.dovecot.died(); err == nil {
		t.Fatal("no error for a Dovecot whose master was killed")
	}
	// What the master left behind still goes, and the cleanup stays quiet.
	if err := s.dovecot.kill(); err != nil {
		t.Fatal(err)
	}
}
