package realmail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// postfixConfig is what the throwaway main.cf and master.cf are made of.
type postfixConfig struct {
	QueueDir    string
	DataDir     string
	LogFile     string
	LogDir      string // maillog_file must lie under a listed prefix
	ChainFile   string // key and certificate, PEM
	Recipients  string // texthash map of the mailboxes Postfix accepts mail for
	Senders     string // texthash map of which login may send as which address
	Submission  int    // port: submission, STARTTLS before AUTH
	Submissions int    // port: submission over implicit TLS
	LMTP        int    // Dovecot's LMTP port
	Auth        int    // Dovecot's auth-client port
}

// postfixMain is a complete main.cf: loopback only, no DNS, no relaying, the
// two test domains delivered to Dovecot over LMTP, and retries after a second
// or two instead of minutes.
var postfixMain = template.Must(template.New("main.cf").Parse(`# Throwaway Postfix for one test (agentkit internal/realmail); delete freely.
compatibility_level = 3.6
queue_directory = {{.QueueDir}}
data_directory = {{.DataDir}}
maillog_file = {{.LogFile}}
maillog_file_prefixes = {{.LogDir}}

myhostname = mail.agentkit.test
mydomain = agentkit.test
myorigin = $myhostname
mydestination =
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
biff = no
append_dot_mydomain = no
readme_directory = no

# No DNS: numeric next hops, and no reverse lookups of clients.
smtp_dns_support_level = disabled
lmtp_dns_support_level = disabled
smtp_host_lookup = native
lmtp_host_lookup = native
smtpd_peername_lookup = no

# Relay nothing: only the test domains are delivered, into Dovecot.
relayhost =
relay_domains =
default_transport = error:5.7.1 the realmail test server relays nothing
local_transport = error:5.1.1 the realmail test server delivers no local mail
alias_maps =
alias_database =
local_recipient_maps =
virtual_mailbox_domains = agentkit.test owner.test
virtual_mailbox_maps = texthash:{{.Recipients}}
virtual_transport = lmtp:inet:127.0.0.1:{{.LMTP}}

# TLS and SASL AUTH through Dovecot's auth service.
smtpd_tls_chain_files = {{.ChainFile}}
smtpd_tls_security_level = may
smtp_tls_security_level = none
lmtp_tls_security_level = none
smtpd_sasl_type = dovecot
smtpd_sasl_path = inet:127.0.0.1:{{.Auth}}
smtpd_sasl_security_options = noanonymous
smtpd_sender_login_maps = texthash:{{.Senders}}

# A deferred message is retried within seconds, so a test never waits minutes.
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
`))

// postfixMaster is master.cf: the submission services on 127.0.0.1 and the
// internal services, none chrooted, no port 25.
var postfixMaster = template.Must(template.New("master.cf").Parse(`# Throwaway Postfix for one test (agentkit internal/realmail); delete freely.
127.0.0.1:{{.Submission}} inet n - n - - smtpd
  -o syslog_name=postfix/submission
  -o smtpd_tls_security_level=encrypt
  -o smtpd_tls_auth_only=yes
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_client_restrictions=permit_sasl_authenticated,reject
  -o smtpd_sender_restrictions=reject_sender_login_mismatch
  -o smtpd_relay_restrictions=permit_sasl_authenticated,reject
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
127.0.0.1:{{.Submissions}} inet n - n - - smtpd
  -o syslog_name=postfix/submissions
  -o smtpd_tls_wrappermode=yes
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_client_restrictions=permit_sasl_authenticated,reject
  -o smtpd_sender_restrictions=reject_sender_login_mismatch
  -o smtpd_relay_restrictions=permit_sasl_authenticated,reject
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
pickup     unix  n - n 60 1 pickup
cleanup    unix  n - n - 0 cleanup
qmgr       unix  n - n 300 1 qmgr
tlsmgr     unix  - - n 1000? 1 tlsmgr
rewrite    unix  - - n - - trivial-rewrite
bounce     unix  - - n - 0 bounce
defer      unix  - - n - 0 bounce
trace      unix  - - n - 0 bounce
verify     unix  - - n - 1 verify
flush      unix  n - n 1000? 0 flush
proxymap   unix  - - n - - proxymap
proxywrite unix  - - n - 1 proxymap
smtp       unix  - - n - - smtp
relay      unix  - - n - - smtp
showq      unix  n - n - - showq
error      unix  - - n - - error
retry      unix  - - n - - error
discard    unix  - - n - - discard
lmtp       unix  - - n - - lmtp
anvil      unix  - - n - 1 anvil
scache     unix  - - n - 1 scache
postlog    unix-dgram n - n - 1 postlogd
`))

// render returns main.cf and master.cf.
func (c postfixConfig) render() (mainCf, masterCf []byte, err error) {
	for _, p := range []string{c.QueueDir, c.DataDir, c.LogFile, c.ChainFile, c.Recipients, c.Senders} {
		if strings.ContainsAny(p, " \t\n,#=") {
			return nil, nil, fmt.Errorf("realmail: the path %q holds characters a Postfix configuration cannot take; set TMPDIR to a plain path", p)
		}
	}
	var m, ms strings.Builder
	if err := postfixMain.Execute(&m, c); err != nil {
		return nil, nil, fmt.Errorf("realmail: rendering main.cf: %w", err)
	}
	if err := postfixMaster.Execute(&ms, c); err != nil {
		return nil, nil, fmt.Errorf("realmail: rendering master.cf: %w", err)
	}
	return []byte(m.String()), []byte(ms.String()), nil
}

// queueDirs are the queue's subdirectories with the owner and mode Postfix's
// post-install gives them ("postfix" owned unless root; maildrop and public
// group-owned by postdrop).
var queueDirs = []struct {
	name  string
	owner string // "root" or "postfix"
	group string // "root" or "postdrop"
	mode  os.FileMode
}{
	{"active", "postfix", "root", 0o700},
	{"bounce", "postfix", "root", 0o700},
	{"corrupt", "postfix", "root", 0o700},
	{"defer", "postfix", "root", 0o700},
	{"deferred", "postfix", "root", 0o700},
	{"flush", "postfix", "root", 0o700},
	{"hold", "postfix", "root", 0o700},
	{"incoming", "postfix", "root", 0o700},
	{"private", "postfix", "root", 0o700},
	{"saved", "postfix", "root", 0o700},
	{"trace", "postfix", "root", 0o700},
	{"maildrop", "postfix", "postdrop", 0o730},
	{"public", "postfix", "postdrop", 0o710},
	{"pid", "root", "root", 0o755},
}

// makeQueue creates the queue directory as "postfix check" would, without
// the second or so that running post-install costs.
func makeQueue(queueDir, dataDir string, ids accountIDs) error {
	if err := os.Mkdir(queueDir, 0o755); err != nil {
		return fmt.Errorf("realmail: creating the Postfix queue: %w", err)
	}
	for _, d := range queueDirs {
		uid, gid := 0, 0
		if d.owner == "postfix" {
			uid = ids.postfixUID
		}
		if d.group == "postdrop" {
			gid = ids.postdropGID
		}
		if err := mkdirOwned(filepath.Join(queueDir, d.name), d.mode, uid, gid); err != nil {
			return err
		}
	}
	return mkdirOwned(dataDir, 0o700, ids.postfixUID, 0)
}

// recipientsMap and sendersMap are the texthash maps for the mailboxes: each
// accepts mail, and each login may send only as itself.
func recipientsMap(users ...User) []byte {
	var b strings.Builder
	for _, u := range users {
		b.WriteString(u.Address + " ok\n")
	}
	return []byte(b.String())
}

func sendersMap(users ...User) []byte {
	var b strings.Builder
	for _, u := range users {
		b.WriteString(u.Address + " " + u.Address + "\n")
	}
	return []byte(b.String())
}

// configurePostfix picks Postfix's ports and writes main.cf, master.cf, its
// maps and, the first time, its queue.
func (s *Servers) configurePostfix() error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.Dir, "postfix")
	conf := postfixConfig{
		QueueDir:    filepath.Join(dir, "queue"),
		DataDir:     filepath.Join(dir, "data"),
		LogFile:     s.postfix.logFile,
		LogDir:      filepath.Dir(s.postfix.logFile),
		ChainFile:   filepath.Join(s.Dir, "tls", "chain.pem"),
		Recipients:  filepath.Join(dir, "recipients"),
		Senders:     filepath.Join(dir, "senders"),
		Submission:  ports[0],
		Submissions: ports[1],
		LMTP:        port(s.LMTPAddr),
		Auth:        port(s.authAddr),
	}
	mainCf, masterCf, err := conf.render()
	if err != nil {
		return err
	}
	for _, f := range []string{"main.cf", "master.cf", "recipients", "senders", s.postfix.logFile, s.postfix.outFile} {
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("realmail: %w", err)
		}
	}
	if err := errors.Join(
		writeOwned(filepath.Join(dir, "main.cf"), mainCf, 0o644, 0, 0),
		writeOwned(filepath.Join(dir, "master.cf"), masterCf, 0o644, 0, 0),
		writeOwned(conf.Recipients, recipientsMap(s.Bot, s.Owner), 0o644, 0, 0),
		writeOwned(conf.Senders, sendersMap(s.Bot, s.Owner), 0o644, 0, 0),
	); err != nil {
		return err
	}
	// Postfix rereads a configuration file until its modification time is
	// in the past (it may still be being written): backdate them, which
	// saves seconds at startup.
	past := time.Now().Add(-time.Minute)
	for _, f := range []string{filepath.Join(dir, "main.cf"), filepath.Join(dir, "master.cf"), conf.Recipients, conf.Senders} {
		if err := os.Chtimes(f, past, past); err != nil {
			return fmt.Errorf("realmail: %w", err)
		}
	}
	if _, err := os.Stat(conf.QueueDir); errors.Is(err, os.ErrNotExist) {
		if err := makeQueue(conf.QueueDir, conf.DataDir, s.ids); err != nil {
			return err
		}
	}
	s.SMTPAddr = hostPort(conf.Submission)
	s.SMTPSAddr = hostPort(conf.Submissions)
	return nil
}
