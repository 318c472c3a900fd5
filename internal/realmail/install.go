package realmail

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// InstallHint is what to install so that Start runs the servers instead of
// skipping the test.
const InstallHint = "apt-get install dovecot-imapd dovecot-lmtpd postfix"

// binaries are the server programs Start runs.
type binaries struct {
	dovecot string // Dovecot's master, run with -F
	master  string // Postfix's master daemon
}

// findBinaries locates Dovecot (with its imap and lmtp services) and
// Postfix with look (lookPath but in tests), or says which are missing.
func findBinaries(look func(name string) string) (binaries, error) {
	var bins binaries
	var missing []string
	bins.dovecot = look("dovecot")
	doveconf := look("doveconf")
	if bins.dovecot == "" || doveconf == "" {
		missing = append(missing, "dovecot (package dovecot-core)")
	} else {
		libexec := "/usr/lib/dovecot"
		if out, err := exec.Command(doveconf, "-c", "/dev/null", "-h", "libexec_dir").Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
			libexec = strings.TrimSpace(string(out))
		}
		for _, svc := range []struct{ bin, pkg string }{{"imap", "dovecot-imapd"}, {"lmtp", "dovecot-lmtpd"}} {
			if _, err := os.Stat(filepath.Join(libexec, svc.bin)); err != nil {
				missing = append(missing, fmt.Sprintf("Dovecot's %s service (package %s)", svc.bin, svc.pkg))
			}
		}
	}
	if postconf := look("postconf"); postconf == "" {
		missing = append(missing, "postfix (package postfix)")
	} else {
		daemonDir := "/usr/lib/postfix/sbin"
		if out, err := exec.Command(postconf, "-d", "-h", "daemon_directory").Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
			daemonDir = strings.TrimSpace(string(out))
		}
		bins.master = filepath.Join(daemonDir, "master")
		if _, err := os.Stat(bins.master); err != nil {
			missing = append(missing, "Postfix's master daemon (package postfix)")
		}
	}
	if len(missing) > 0 {
		return bins, fmt.Errorf("not installed: %s; install them with `%s` to run the real mail server tests", strings.Join(missing, ", "), InstallHint)
	}
	return bins, nil
}

// lookPath finds a program on PATH or in the sbin directories, which a
// non-root PATH often lacks; it returns "" when there is none.
func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// accountIDs are the system accounts the servers run as; the packages create
// all of them but nobody.
type accountIDs struct {
	mailUID, mailGID int // nobody: owns the mailboxes (Dovecot refuses root)
	dovecotGID       int // Dovecot's auth process reads the passwd-file as this group
	postfixUID       int // owns Postfix's queue
	postdropGID      int // group of the queue's maildrop and public directories
}

// lookupAccounts finds the accounts, or says which is missing.
func lookupAccounts() (accountIDs, error) {
	var ids accountIDs
	var errs []error
	uid := func(name string, id, gid *int) {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("user %q: %w", name, err))
			return
		}
		*id, _ = strconv.Atoi(u.Uid)
		if gid != nil {
			*gid, _ = strconv.Atoi(u.Gid)
		}
	}
	group := func(name string, id *int) {
		g, err := user.LookupGroup(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("group %q: %w", name, err))
			return
		}
		*id, _ = strconv.Atoi(g.Gid)
	}
	uid("nobody", &ids.mailUID, &ids.mailGID)
	var unused int
	uid("dovenull", &unused, nil)
	uid("dovecot", &unused, &ids.dovecotGID)
	uid("postfix", &ids.postfixUID, nil)
	group("postdrop", &ids.postdropGID)
	if err := errors.Join(errs...); err != nil {
		return ids, fmt.Errorf("realmail: a system account the mail servers need is missing (reinstall them with `%s`): %w", InstallHint, err)
	}
	if ids.mailUID == 0 {
		return ids, errors.New("realmail: the user nobody is root here; Dovecot will not store mail as root")
	}
	return ids, nil
}
