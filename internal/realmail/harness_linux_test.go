package realmail

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"
)

// TestServersStayOnLoopbackAndLeaveNothing checks the harness itself: every
// listening socket of both servers is one of the advertised loopback
// addresses, mail is handled by an unprivileged process, and the cleanup
// stops every process and removes every file.
func TestServersStayOnLoopbackAndLeaveNothing(t *testing.T) {
	var s *Servers
	var groups []int
	t.Run("running", func(t *testing.T) {
		s = Start(t)
		groups = []int{s.dovecot.cmd.Process.Pid, s.postfix.cmd.Process.Pid}

		want := []string{s.IMAPAddr, s.IMAPSAddr, s.LMTPAddr, s.authAddr, s.SMTPAddr, s.SMTPSAddr}
		got := listeners(t, groups)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("the servers listen on %v, want exactly %v", got, want)
		}

		c, err := imapclient.DialStartTLS(s.IMAPAddr, &imapclient.Options{TLSConfig: s.TLSConfig()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Login(s.Bot.Address, s.Bot.Password).Wait(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		uids := imapUIDs(t, s.dovecot.cmd.Process.Pid)
		if len(uids) == 0 {
			t.Fatal("no Dovecot imap process serves the logged-in session")
		}
		for _, uid := range uids {
			if uid != s.ids.mailUID {
				t.Errorf("Dovecot's imap process runs as uid %d, want %d (nobody)", uid, s.ids.mailUID)
			}
		}
	})
	if s == nil {
		t.Skip("Start skipped")
	}
	for _, g := range groups {
		if pids := groupPIDs(g); len(pids) > 0 {
			t.Errorf("processes %v of process group %d outlive the test", pids, g)
		}
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s outlives the test (%v)", s.Dir, err)
	}
	for _, addr := range []string{s.IMAPAddr, s.SMTPAddr} {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s still answers after the test", addr)
		}
	}
}

// listeners returns the sorted local addresses of the listening TCP sockets
// held by processes of the given process groups.
func listeners(t *testing.T, groups []int) []string {
	t.Helper()
	inodes := map[string]bool{}
	for _, g := range groups {
		for _, pid := range groupPIDs(g) {
			fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
			for _, fd := range fds {
				link, err := os.Readlink(fd)
				if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
					inodes[strings.TrimSuffix(inode, "]")] = true
				}
			}
		}
	}
	var addrs []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			addrs = append(addrs, procNetAddr(t, table, fields[1]))
		}
		f.Close()
	}
	slices.Sort(addrs)
	return addrs
}

// procNetAddr decodes an address of /proc/net/tcp ("0100007F:0050"): the IP
// in host byte order, the port in hexadecimal.
func procNetAddr(t *testing.T, table, s string) string {
	t.Helper()
	ipHex, portHex, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(ipHex)
	port, err2 := strconv.ParseUint(portHex, 16, 16)
	if err != nil || err2 != nil {
		t.Fatalf("%s: cannot parse %q", table, s)
	}
	if len(raw) != 4 {
		return "[ipv6 " + ipHex + "]:" + strconv.FormatUint(port, 10) // never wanted
	}
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.NativeEndian.Uint32(raw))
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}

// imapUIDs returns the real uids of Dovecot's imap (mail) processes.
func imapUIDs(t *testing.T, pgid int) []int {
	t.Helper()
	var uids []int
	for _, pid := range groupPIDs(pgid) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(comm)) != "imap" {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				uid, _ := strconv.Atoi(strings.Fields(rest)[0])
				uids = append(uids, uid)
			}
		}
	}
	return uids
}
