package runtimes

import (
	"runtime"
	"strings"

	"github.com/agentkit/agentkit/internal/redact"
)

// PhonePasswordEnv holds the phone password; no child ever sees it, even when allow-listed.
const PhonePasswordEnv = "AGENTKIT_PHONE_PASSWORD"

// The task variables every agent gets (DESIGN.md, Runtimes).
const (
	EnvTask    = "AGENTKIT_TASK"
	EnvJob     = "AGENTKIT_JOB"
	EnvRoot    = "AGENTKIT_ROOT"
	EnvRole    = "AGENTKIT_ROLE"
	EnvModel   = "AGENTKIT_MODEL"
	EnvSession = "AGENTKIT_SESSION"
)

// ChildEnv returns the environment of a child: parent minus every secret (the
// phone password always; any name saying KEY, TOKEN, SECRET or PASSWORD unless
// it is in allow), plus extra (KEY=VALUE, filtered the same way), where extra
// wins over parent for the same name.
func ChildEnv(parent []string, allow []string, extra []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[envKey(a)] = true
	}
	keep := func(name string) bool {
		if envKey(name) == envKey(PhonePasswordEnv) {
			return false
		}
		return !redact.IsSecretName(name) || allowed[envKey(name)]
	}
	// The last extra entry of a name wins.
	extraAt := make(map[string]int, len(extra))
	for i, kv := range extra {
		name, _ := redact.SplitEnv(kv)
		extraAt[envKey(name)] = i
	}
	out := make([]string, 0, len(parent)+len(extra))
	seen := make(map[string]bool, len(parent))
	for _, kv := range parent {
		name, _ := redact.SplitEnv(kv)
		k := envKey(name)
		if _, over := extraAt[k]; over || seen[k] || !keep(name) {
			continue
		}
		seen[k] = true
		out = append(out, kv)
	}
	for i, kv := range extra {
		name, _ := redact.SplitEnv(kv)
		if extraAt[envKey(name)] != i || !keep(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// envKey is how environment names compare: exactly, or ignoring case on Windows.
func envKey(name string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(name)
	}
	return name
}

// lookupEnv returns the value of name in env (the last entry wins, as in os/exec).
func lookupEnv(env []string, name string) string {
	val := ""
	for _, kv := range env {
		if n, v := redact.SplitEnv(kv); envKey(n) == envKey(name) {
			val = v
		}
	}
	return val
}
