//go:build windows

package supervisor

import "os/exec"

// shellCommand runs command through cmd.exe.
func shellCommand(dir, command string) *exec.Cmd {
	cmd := exec.Command("cmd", "/C", command)
	cmd.Dir = dir
	return cmd
}

// killGroup kills the command; on Windows its children are not reached.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
