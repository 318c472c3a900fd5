package service

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SystemdUnit returns a systemd user unit that runs the service and loads
// phone.env (the phone password) when it exists.
func SystemdUnit(binary, home string) string {
	return fmt.Sprintf(`[Unit]
Description=agentkit: coding-agent supervisor and mailbot
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
Environment=AGENTKIT_HOME=%s
# The leading '-' makes a missing phone.env fine; it holds AGENTKIT_PHONE_PASSWORD.
EnvironmentFile=-%s
ExecStart=%s service run
Restart=on-failure
RestartSec=10s
# On stop, running sessions get the service's --grace (30s) to finish their
# step, then are stopped; this leaves room for both.
TimeoutStopSec=90s
KillMode=mixed

[Install]
WantedBy=default.target
`, systemdQuote(home), systemdQuote(filepath.Join(home, "phone.env")), systemdQuote(binary))
}

// systemdQuote quotes a value for a unit file when it holds spaces.
func systemdQuote(s string) string {
	if !strings.ContainsAny(s, " \t\"\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// LaunchdPlist returns a launchd agent that runs the service at login. launchd
// cannot read an environment file, so the password comes from the keychain-less
// phone.env through a shell that sources it.
func LaunchdPlist(binary, home string) string {
	script := fmt.Sprintf(`set -a; [ -f %s ] && . %s; exec %s service run`,
		shellQuote(filepath.Join(home, "phone.env")), shellQuote(filepath.Join(home, "phone.env")), shellQuote(binary))
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>dev.agentkit.service</string>
  <key>ProgramArguments</key>
  <array><string>/bin/sh</string><string>-c</string><string>%s</string></array>
  <key>EnvironmentVariables</key>
  <dict><key>AGENTKIT_HOME</key><string>%s</string></dict>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>StandardErrorPath</key><string>%s</string>
</dict>
</plist>
`, xmlEscape(script), xmlEscape(home), xmlEscape(filepath.Join(home, "service.err")))
}

// WindowsInstructions says how to run the service at logon on Windows, where
// the password lives in the Credential Manager and no unit file is needed.
func WindowsInstructions(binary string) string {
	return fmt.Sprintf(`Create a logon task that runs the service (the phone password is read from the
Windows Credential Manager, so nothing else is needed):

  schtasks /Create /TN agentkit /SC ONLOGON /RL LIMITED /TR "\"%s\" service run"

Start it now with: schtasks /Run /TN agentkit
`, binary)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
