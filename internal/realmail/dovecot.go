package realmail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// dovecotConfig is what the throwaway dovecot.conf is made of.
type dovecotConfig struct {
	Name     string // instance_name, unique per Start
	BaseDir  string // sockets and the master's pid file
	StateDir string
	LogFile  string
	CertFile string
	KeyFile  string
	Users    string // passwd-file with both mailboxes
	IMAP     int    // port: IMAP with STARTTLS
	IMAPS    int    // port: IMAP over implicit TLS
	LMTP     int    // port: LMTP, where Postfix delivers
	Auth     int    // port: the auth-client service Postfix's SASL uses
	UID, GID int    // the unprivileged owner of the mail files
}

// dovecotTemplate is a complete configuration: nothing is read from
// /etc/dovecot, and every listener is on 127.0.0.1.
var dovecotTemplate = template.Must(template.New("dovecot.conf").Parse(`# Throwaway Dovecot for one test (agentkit internal/realmail); delete freely.
instance_name = {{.Name}}
base_dir = {{.BaseDir}}
state_dir = {{.StateDir}}
log_path = {{.LogFile}}
log_timestamp = "%Y-%m-%d %H:%M:%S "
auth_verbose = yes

protocols = imap lmtp
listen = 127.0.0.1
hostname = mail.agentkit.test

ssl = required
ssl_min_protocol = TLSv1.2
ssl_cert = <{{.CertFile}}
ssl_key = <{{.KeyFile}}
disable_plaintext_auth = yes
auth_mechanisms = plain login
# Every test client comes from 127.0.0.1: no brute-force delays, or one
# test's wrong password would slow down every login after it.
auth_failure_delay = 0 secs

default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = {{.UID}}
last_valid_uid = {{.UID}}
first_valid_gid = {{.GID}}
last_valid_gid = {{.GID}}

mail_location = maildir:~/Maildir
# IDLE notices new mail through inotify; this is the fallback poll.
mailbox_idle_check_interval = 1 secs

passdb {
  driver = passwd-file
  args = scheme=PLAIN {{.Users}}
}
userdb {
  driver = passwd-file
  args = {{.Users}}
}

service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = {{.IMAP}}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = {{.IMAPS}}
    ssl = yes
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = {{.LMTP}}
  }
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service auth {
  inet_listener auth-client {
    address = 127.0.0.1
    port = {{.Auth}}
  }
}
`))

// render returns the configuration file's text.
func (c dovecotConfig) render() ([]byte, error) {
	for _, p := range []string{c.BaseDir, c.StateDir, c.LogFile, c.CertFile, c.KeyFile, c.Users} {
		if strings.ContainsAny(p, " \t\n\"#<") {
			return nil, fmt.Errorf("realmail: the path %q holds characters a Dovecot configuration cannot take; set TMPDIR to a plain path", p)
		}
	}
	var b strings.Builder
	if err := dovecotTemplate.Execute(&b, c); err != nil {
		return nil, fmt.Errorf("realmail: rendering dovecot.conf: %w", err)
	}
	return []byte(b.String()), nil
}

// passwdFileLine is one mailbox in Dovecot's passwd-file format:
// user:password:uid:gid:gecos:home:shell:extra.
func passwdFileLine(u User, uid, gid int, mailRoot string) string {
	local, domain, _ := strings.Cut(u.Address, "@")
	home := filepath.Join(mailRoot, domain, local)
	return u.Address + ":{PLAIN}" + u.Password + ":" + strconv.Itoa(uid) + ":" + strconv.Itoa(gid) + "::" + home + "::\n"
}

// configureDovecot picks Dovecot's ports and writes its configuration and
// passwd-file.
func (s *Servers) configureDovecot() error {
	ids := s.ids
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.Dir, "dovecot")
	mail := filepath.Join(s.Dir, "mail")
	conf := dovecotConfig{
		Name:     "realmail-" + strings.TrimPrefix(filepath.Base(s.Dir), "realmail-"),
		BaseDir:  filepath.Join(dir, "run"),
		StateDir: filepath.Join(dir, "state"),
		LogFile:  s.dovecot.logFile,
		CertFile: filepath.Join(s.Dir, "tls", "cert.pem"),
		KeyFile:  filepath.Join(s.Dir, "tls", "key.pem"),
		Users:    filepath.Join(dir, "users"),
		IMAP:     ports[0],
		IMAPS:    ports[1],
		LMTP:     ports[2],
		Auth:     ports[3],
		UID:      ids.mailUID,
		GID:      ids.mailGID,
	}
	text, err := conf.render()
	if err != nil {
		return err
	}
	users := passwdFileLine(s.Bot, ids.mailUID, ids.mailGID, mail) + passwdFileLine(s.Owner, ids.mailUID, ids.mailGID, mail)
	for _, f := range []string{conf.Users, filepath.Join(dir, "dovecot.conf"), s.dovecot.logFile, s.dovecot.outFile} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("realmail: %w", err)
		}
	}
	if err := errors.Join(
		writeOwned(conf.Users, []byte(users), 0o640, 0, ids.dovecotGID),
		writeOwned(filepath.Join(dir, "dovecot.conf"), text, 0o600, 0, 0),
	); err != nil {
		return err
	}
	s.IMAPAddr = hostPort(conf.IMAP)
	s.IMAPSAddr = hostPort(conf.IMAPS)
	s.LMTPAddr = hostPort(conf.LMTP)
	s.authAddr = hostPort(conf.Auth)
	return nil
}
