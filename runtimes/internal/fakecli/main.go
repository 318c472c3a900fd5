// Command fakecli stands in for claude, codex, opencode and builder scripts
// in the runtimes tests: it records how it was called and plays a script.
//
// Installed under a CLI's name, it answers --version, then appends one JSON
// line {name, args, stdin, env, dir, pid} to the file named by FAKECLI_RECORD
// and plays the script named by FAKECLI_SCRIPT: plain lines go to stdout,
// lines starting with @ are directives:
//
//	@stderr TEXT        print TEXT on stderr
//	@exit N             exit with status N
//	@pidfile PATH       write this process's pid to PATH
//	@grandchild PATH    start a child that ignores SIGTERM, shares stdout, and writes its pid to PATH
//	@daemon PATH        the same, but in a new session (outside the process group)
//	@ignore-term        ignore SIGTERM from here on
//	@waitfile PATH      wait until PATH exists
//	@echo-stdin         print what came on stdin
//	@hang               block for ever
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "__grandchild" {
		grandchild(os.Args[2])
		return
	}
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	for _, a := range os.Args[1:] {
		if a == "--version" {
			fmt.Printf("%s 9.9.9 (fake)\n", name)
			return
		}
	}
	stdin, _ := io.ReadAll(os.Stdin)
	if err := record(name, stdin); err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		os.Exit(97)
	}
	os.Exit(play(os.Getenv("FAKECLI_SCRIPT"), stdin))
}

// record appends how this process was called to $FAKECLI_RECORD.
func record(name string, stdin []byte) error {
	path := os.Getenv("FAKECLI_RECORD")
	if path == "" {
		return nil
	}
	dir, _ := os.Getwd()
	line, err := json.Marshal(map[string]any{
		"name":  name,
		"args":  os.Args[1:],
		"stdin": string(stdin),
		"env":   os.Environ(),
		"dir":   dir,
		"pid":   os.Getpid(),
	})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n'))
	return err
}

// play runs a script and returns the exit status.
func play(path string, stdin []byte) int {
	if path == "" {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		return 98
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if !strings.HasPrefix(line, "@") {
			fmt.Fprintln(out, line)
			continue
		}
		// Directives act on the world: what came before must be out first.
		out.Flush()
		verb, arg, _ := strings.Cut(line[1:], " ")
		switch verb {
		case "stderr":
			fmt.Fprintln(os.Stderr, arg)
		case "exit":
			n, _ := strconv.Atoi(arg)
			return n
		case "pidfile":
			writePid(arg, os.Getpid())
		case "grandchild", "daemon":
			cmd := exec.Command(os.Args[0], "__grandchild", arg)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if verb == "daemon" {
				detach(cmd)
			}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "fakecli:", err)
				return 96
			}
		case "ignore-term":
			signal.Ignore(syscall.SIGTERM)
		case "waitfile":
			for {
				if _, err := os.Stat(arg); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		case "echo-stdin":
			out.Write(bytes.TrimRight(stdin, "\n"))
			out.WriteString("\n")
		case "hang":
			sleepForever()
		default:
			fmt.Fprintln(os.Stderr, "fakecli: unknown directive", line)
			return 95
		}
	}
	return 0
}

// grandchild ignores SIGTERM, says who it is, and lives until killed.
func grandchild(pidfile string) {
	signal.Ignore(syscall.SIGTERM)
	writePid(pidfile, os.Getpid())
	fmt.Println("grandchild running")
	sleepForever()
}

// sleepForever blocks without tripping the runtime's deadlock detector.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// writePid writes pid to path whole (temp file + rename), so a reader never sees half of it.
func writePid(path string, pid int) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o600); err == nil {
		_ = os.Rename(tmp, path)
	}
}
