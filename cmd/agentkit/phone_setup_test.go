package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
)

func (w *phoneWorld) config() mailbot.Config {
	w.t.Helper()
	c, err := mailbot.LoadConfig(mailbot.ConfigPath(w.home))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func (w *phoneWorld) phoneEnabled() bool {
	w.t.Helper()
	if _, err := os.Stat(filepath.Join(w.home, "state.db")); err != nil {
		return false
	}
	db, err := state.Open(context.Background(), filepath.Join(w.home, "state.db"))
	if err != nil {
		w.t.Fatal(err)
	}
	defer db.Close()
	on, err := problems.NewStore(db).PhoneEnabled(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return on
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestPhoneSetupInteractive drives setup through its prompts: a custom
// provider on loopback, the password typed, phone.env written on "yes".
func TestPhoneSetupInteractive(t *testing.T) {
	w := newPhoneWorld(t)
	answers := []string{
		testBot,  // the bot's address
		"custom", // provider (the guess for corp.test is custom already)
		"imap.corp.test:" + port(t, w.imap.Addr),
		"", // implicit TLS, the default for a port that is not 143
		"smtp.corp.test:" + port(t, w.smtp.Addr),
		"starttls",
		"mx.corp.test", // trusted authserv-id
		"",             // login name: the bot's address
		testBot,        // owner: refused, the bot's own address
		"me@home.test", // owner
		testPassword,   // typed password
		"",             // keep it in phone.env: yes
	}
	// The CA of the private servers comes by flag: no question for it.
	err := w.setup(w.deps(nil), strings.Join(answers, "\n")+"\n", "--imap-ca", w.ca.File, "--smtp-ca", w.ca.File)
	out := w.out.String()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"Give the bot a mailbox of its own",
		"The bot's email address: ",
		"Which provider hosts the bot's mailbox (gmail, fastmail, icloud, yahoo, outlook, custom) [custom]: ",
		"The IMAP server, as host:port [imap.corp.test:993]: ",
		"How IMAP is protected: implicit (TLS from the start), starttls, or none (loopback only) [implicit]: ",
		"An authserv-id is the name your provider writes first",
		"The login name for IMAP and SMTP [bot@corp.test]: ",
		"That will not work: \"bot@corp.test\" is the bot's own address",
		"The bot's password (typing is hidden): ",
		"Checking the settings (nothing is sent):",
		"✓ IMAP TLS   TLS 1.3, certificate for imap.corp.test",
		"✓ IMAP IDLE  IDLE is offered",
		"✓ SMTP login logged in as bot@corp.test",
		"Saved " + mailbot.ConfigPath(w.home),
		"The password is kept in " + filepath.Join(w.home, "phone.env"),
		"The phone channel is on.",
		"agentkit phone test --wait",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	c := w.config()
	if c.BotAddress != testBot || !slices.Equal(c.OwnerAddresses, []string{"me@home.test"}) || c.SMTP.TLS != mailbot.TLSStartTLS || !slices.Equal(c.TrustedAuthservIDs, []string{"mx.corp.test"}) {
		t.Errorf("saved %+v", c)
	}
	if m := mode(t, mailbot.ConfigPath(w.home)); runtime.GOOS != "windows" && m != 0o600 {
		t.Errorf("phone.yaml mode %04o", m)
	}
	if m := mode(t, filepath.Join(w.home, "phone.env")); runtime.GOOS != "windows" && m != 0o600 {
		t.Errorf("phone.env mode %04o", m)
	}
	if p, err := (&secrets.EnvFile{Path: filepath.Join(w.home, "phone.env")}).Get(secrets.Phone); err != nil || p.Reveal() != testPassword {
		t.Errorf("phone.env: %v", err)
	}
	if !w.phoneEnabled() {
		t.Error("the phone channel is off after setup")
	}
	if strings.Contains(out, testPassword) {
		t.Error("setup printed the password")
	}
	if n := len(w.smtp.Messages()); n != 0 {
		t.Errorf("setup sent %d messages", n)
	}
}

// TestPhoneSetupFlags is scripted setup: every answer a flag, the password
// on stdin.
func TestPhoneSetupFlags(t *testing.T) {
	w := newPhoneWorld(t)
	args := append([]string{"--provider", "custom", "--bot-address", testBot, "--owner", "me@home.test,me@work.test",
		"--authserv-id", "mx.corp.test", "--authserv-id", "*.mx.corp.test", "--password-stdin", "--write-env"}, w.serverFlags()...)
	if err := w.setup(w.deps(nil), testPassword+"\n", args...); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	out := w.out.String()
	if strings.Contains(out, "?") || strings.Contains(out, "]: ") || strings.Contains(out, "Give the bot a mailbox") {
		t.Errorf("scripted setup asked something:\n%s", out)
	}
	c := w.config()
	if !slices.Equal(c.OwnerAddresses, []string{"me@home.test", "me@work.test"}) || !slices.Equal(c.TrustedAuthservIDs, []string{"mx.corp.test", "*.mx.corp.test"}) || c.IMAP.CAFile != w.ca.File {
		t.Errorf("saved %+v", c)
	}
	data, _ := os.ReadFile(mailbot.ConfigPath(w.home))
	if strings.Contains(string(data), testPassword) || strings.Contains(string(data), "password") {
		t.Errorf("phone.yaml mentions the password:\n%s", data)
	}
	if !w.phoneEnabled() {
		t.Error("channel off")
	}

	// Without --write-env the password is not stored, and setup says how
	// to provide it.
	w2 := newPhoneWorld(t)
	args = append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--authserv-id", ""}, w2.serverFlags()...)
	if err := w2.setup(w2.deps(nil), testPassword, args...); err != nil {
		t.Fatalf("%v\n%s", err, w2.out.String())
	}
	out = w2.out.String()
	for _, want := range []string{"The password is not stored", "read -rs AGENTKIT_PHONE_PASSWORD && export AGENTKIT_PHONE_PASSWORD", "chmod 600", "No authserv-id is trusted"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(w2.home, "phone.env")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("phone.env written without --write-env: %v", err)
	}
}

// TestPhoneSetupWindowsKeeper: where a keeper exists, the password goes to
// the Windows Credential Manager, and status says so.
func TestPhoneSetupWindowsKeeper(t *testing.T) {
	w := newPhoneWorld(t)
	vault := memVault{}
	deps := w.deps(&secrets.CredentialManager{Vault: vault})
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin"}, w.serverFlags()...)
	if err := w.setup(deps, testPassword, args...); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if !strings.Contains(w.out.String(), "The password is kept in the Windows Credential Manager.") {
		t.Errorf("output:\n%s", w.out.String())
	}
	if _, ok := vault["agentkit:phone"]; !ok {
		t.Fatal("nothing in the credential manager")
	}
	if _, err := os.Stat(filepath.Join(w.home, "phone.env")); !errors.Is(err, os.ErrNotExist) {
		t.Error("phone.env written on Windows")
	}
	if st := w.status(deps); !strings.Contains(st, "password              set, in the Windows Credential Manager") {
		t.Errorf("status:\n%s", st)
	}
	// Setting up again keeps the stored password without asking for it.
	if err := w.setup(deps, strings.Repeat("\n", 10), "--no-verify"); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if !strings.Contains(w.out.String(), "A password is already set in the Windows Credential Manager; keep it (yes/no) [yes]: ") || strings.Contains(w.out.String(), "typing is hidden") {
		t.Errorf("output:\n%s", w.out.String())
	}
	// Pressing Enter kept every setting, the STARTTLS of a port that does
	// not say its mode included.
	if c := w.config(); c.SMTP.TLS != mailbot.TLSStartTLS || c.IMAP.TLS != mailbot.TLSImplicit || c.OwnerAddresses[0] != "me@home.test" {
		t.Errorf("re-run changed the settings: %+v", c)
	}
}

// TestPhoneSetupFailureSavesNothing: a verification failure leaves no
// phone.yaml, no phone.env, no credential, and the channel off.
func TestPhoneSetupFailureSavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(w *phoneWorld) []string
		pw   string
		want string
	}{
		{"wrong password", func(w *phoneWorld) []string { return w.serverFlags() }, "wrong-password",
			"✗ IMAP login the server refused the login of bot@corp.test (NO [AUTHENTICATIONFAILED]"},
		{"no CA for the private server", func(w *phoneWorld) []string {
			return []string{"--imap", "imap.corp.test:" + port(t, w.imap.Addr), "--smtp", "smtp.corp.test:" + port(t, w.smtp.Addr), "--smtp-tls", "starttls"}
		}, testPassword, "✗ IMAP TLS   the certificate of imap.corp.test is signed by \"agentkit test CA\" (agentkit tests), which this computer does not trust; if it is your own server, give its CA certificate with --imap-ca FILE"},
		{"misspelt host", func(w *phoneWorld) []string {
			return append(w.serverFlags(), "--smtp", "smtp.corp.tset:587")
		}, testPassword, "✗ SMTP DNS   smtp.corp.tset does not exist in DNS; check the spelling of the host given with --smtp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPhoneWorld(t)
			vault := memVault{}
			for _, keeper := range []secrets.Writer{nil, &secrets.CredentialManager{Vault: vault}} {
				args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--write-env"}, tc.args(w)...)
				err := w.setup(w.deps(keeper), tc.pw, args...)
				if err == nil || !strings.Contains(err.Error(), "nothing was saved") || !strings.Contains(err.Error(), "--no-verify") {
					t.Fatalf("err = %v\n%s", err, w.out.String())
				}
				if !strings.Contains(w.out.String(), tc.want) {
					t.Errorf("output lacks %q:\n%s", tc.want, w.out.String())
				}
				entries, _ := os.ReadDir(w.home)
				for _, e := range entries {
					if e.Name() != "state.db" && !strings.HasPrefix(e.Name(), "state.db-") {
						t.Errorf("left %s behind", e.Name())
					}
				}
				if len(vault) != 0 || w.phoneEnabled() {
					t.Errorf("credential %v, channel on %v", vault, w.phoneEnabled())
				}
			}
			// --no-verify saves anyway.
			args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin", "--no-verify"}, tc.args(w)...)
			if err := w.setup(w.deps(nil), tc.pw, args...); err != nil {
				t.Fatalf("--no-verify: %v", err)
			}
			if !strings.Contains(w.out.String(), "Not verified (--no-verify)") || !w.phoneEnabled() {
				t.Errorf("--no-verify:\n%s", w.out.String())
			}
		})
	}
}

func TestPhoneSetupRefusals(t *testing.T) {
	w := newPhoneWorld(t)
	base := []string{"--password-stdin", "--no-verify"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"owner is the bot", []string{"--bot-address", testBot, "--owner", "BOT@corp.test", "--provider", "gmail"}, `--owner: "BOT@corp.test" is the bot's own address`},
		{"outlook", []string{"--bot-address", "bot@outlook.com", "--owner", "me@home.test"}, "Outlook.com / Microsoft 365 needs OAuth2, which agentkit does not do yet"},
		{"unknown provider", []string{"--bot-address", testBot, "--owner", "me@home.test", "--provider", "aol"}, `unknown provider "aol"`},
		{"cleartext to a remote host", []string{"--bot-address", testBot, "--owner", "me@home.test", "--imap", "mail.corp.test:143", "--imap-tls", "none"}, "--imap-tls: none sends the password in clear text"},
		{"no password", []string{"--bot-address", testBot, "--owner", "me@home.test", "--provider", "gmail", "--no-input"}, "no password: give it on standard input with --password-stdin"},
		{"no bot address", []string{"--owner", "me@home.test", "--no-input"}, "give it with --bot-address"},
		{"bad server", []string{"--bot-address", testBot, "--owner", "me@home.test", "--imap", "imap.corp.test:http"}, "--imap: \"imap.corp.test:http\" has no valid port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !slices.Contains(args, "--no-input") {
				args = append(append([]string{}, base...), args...)
			}
			err := w.setup(w.deps(nil), testPassword, args...)
			if err == nil || !strings.Contains(err.Error()+w.out.String(), tc.want) {
				t.Fatalf("err = %v, want %q\n%s", err, tc.want, w.out.String())
			}
			if _, err := os.Stat(mailbot.ConfigPath(w.home)); !errors.Is(err, os.ErrNotExist) {
				t.Error("phone.yaml written")
			}
		})
	}
}

// TestPhoneSetupPresets: each preset, chosen interactively or by flag,
// writes its servers and trusted ids and says where app passwords are made.
func TestPhoneSetupPresets(t *testing.T) {
	cases := []struct {
		provider, bot, imap, smtp, authserv, appPw string
	}{
		{"gmail", "agentkit.bot@gmail.com", "imap.gmail.com:993", "smtp.gmail.com:465", "mx.google.com", "https://myaccount.google.com/apppasswords"},
		{"fastmail", "bot@fastmail.com", "imap.fastmail.com:993", "smtp.fastmail.com:465", "*.messagingengine.com", "Privacy & Security → App passwords"},
		{"icloud", "bot@icloud.com", "imap.mail.me.com:993", "smtp.mail.me.com:587", "dkim-verifier.icloud.com", "App-Specific Passwords"},
		{"yahoo", "bot@yahoo.com", "imap.mail.yahoo.com:993", "smtp.mail.yahoo.com:465", "*.yahoo.com", "Generate app password"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			for _, interactive := range []bool{true, false} {
				w := newPhoneWorld(t)
				var err error
				if interactive {
					// bot address, provider (guessed), login name, owner, password, phone.env
					err = w.setup(w.deps(nil), strings.Join([]string{tc.bot, "", "", "me@home.test", testPassword, "no"}, "\n")+"\n", "--no-verify")
				} else {
					err = w.setup(w.deps(nil), testPassword, "--provider", tc.provider, "--bot-address", tc.bot, "--owner", "me@home.test", "--password-stdin", "--no-verify")
				}
				if err != nil {
					t.Fatalf("interactive=%v: %v\n%s", interactive, err, w.out.String())
				}
				c := w.config()
				if c.IMAP.Addr() != tc.imap || c.SMTP.Addr() != tc.smtp || !slices.Contains(c.TrustedAuthservIDs, tc.authserv) || c.IMAP.Username != tc.bot {
					t.Errorf("interactive=%v: saved %+v", interactive, c)
				}
				if !strings.Contains(unwrap(w.out.String()), tc.appPw) {
					t.Errorf("interactive=%v: output does not say where app passwords are made:\n%s", interactive, w.out.String())
				}
			}
		})
	}
}

// TestPhoneSetupRollsBackThePassword: when phone.yaml cannot be written,
// the credential stored a moment before is removed again.
func TestPhoneSetupRollsBackThePassword(t *testing.T) {
	w := newPhoneWorld(t)
	vault := memVault{}
	if err := os.MkdirAll(mailbot.ConfigPath(w.home), 0o700); err != nil { // a folder where the file goes
		t.Fatal(err)
	}
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--password-stdin"}, w.serverFlags()...)
	err := w.setup(w.deps(&secrets.CredentialManager{Vault: vault}), testPassword, args...)
	if err == nil || !strings.Contains(err.Error(), "saving phone settings") {
		t.Fatalf("err = %v", err)
	}
	if len(vault) != 0 {
		t.Error("the credential stayed after phone.yaml failed")
	}
	if w.phoneEnabled() {
		t.Error("the channel is on")
	}
}

func TestPhoneSetupRefusesExposedEnvFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	w := newPhoneWorld(t)
	os.MkdirAll(w.home, 0o700)
	env := filepath.Join(w.home, "phone.env")
	os.WriteFile(env, []byte("AGENTKIT_PHONE_PASSWORD='"+testPassword+"'\n"), 0o644)
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--no-input"}, w.serverFlags()...)
	err := w.setup(w.deps(nil), "", args...)
	if err == nil || !strings.Contains(err.Error(), "chmod 600 "+env) || strings.Contains(err.Error(), testPassword) {
		t.Fatalf("err = %v", err)
	}
	if st := w.status(w.deps(nil)); !strings.Contains(st, "password  cannot be used: "+env+" can be read or changed by other users (mode 0644)") {
		t.Errorf("status:\n%s", st)
	}
	os.Chmod(env, 0o600)
	if err := w.setup(w.deps(nil), "", args...); err != nil {
		t.Fatalf("after chmod: %v\n%s", err, w.out.String())
	}
}

// unwrap joins the lines a terminal-width wrap broke.
func unwrap(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestPhoneSetupPasswordFromEnvironment: a password already in
// AGENTKIT_PHONE_PASSWORD is used without asking, and kept where the
// service finds it: the Credential Manager, or phone.env when asked.
func TestPhoneSetupPasswordFromEnvironment(t *testing.T) {
	w := newPhoneWorld(t)
	w.env["AGENTKIT_PHONE_PASSWORD"] = testPassword
	args := append([]string{"--bot-address", testBot, "--owner", "me@home.test", "--no-input"}, w.serverFlags()...)

	if err := w.setup(w.deps(nil), "", args...); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if out := unwrap(w.out.String()); !strings.Contains(out, "The password comes from AGENTKIT_PHONE_PASSWORD in this shell; the background service needs it too") {
		t.Errorf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(w.home, "phone.env")); !errors.Is(err, os.ErrNotExist) {
		t.Error("phone.env written without --write-env")
	}

	if err := w.setup(w.deps(nil), "", append(args, "--write-env")...); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if p, err := (&secrets.EnvFile{Path: filepath.Join(w.home, "phone.env")}).Get(secrets.Phone); err != nil || p.Reveal() != testPassword {
		t.Errorf("phone.env: %v", err)
	}

	vault := memVault{}
	if err := w.setup(w.deps(&secrets.CredentialManager{Vault: vault}), "", args...); err != nil {
		t.Fatalf("%v\n%s", err, w.out.String())
	}
	if p, err := (&secrets.CredentialManager{Vault: vault}).Get(secrets.Phone); err != nil || p.Reveal() != testPassword {
		t.Errorf("credential manager: %v", err)
	}
}
