package redact

import "strings"

// secretWords are the parts of an environment variable name that mark its value as a secret.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"}

// minEnvSecret is the shortest environment value treated as a secret; shorter
// values ("1", "true") would mask ordinary text everywhere.
const minEnvSecret = 6

// IsSecretName reports whether an environment variable's name says it holds a
// secret: it contains KEY, TOKEN, SECRET, PASSWORD (or PASSWD, PASSPHRASE,
// CREDENTIAL), in any case.
func IsSecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// SplitEnv splits a KEY=VALUE entry; a Windows entry such as "=C:=C:\x" keeps its leading '='.
func SplitEnv(kv string) (name, value string) {
	if i := strings.IndexByte(kv[min(1, len(kv)):], '='); i >= 0 {
		i += min(1, len(kv))
		return kv[:i], kv[i+1:]
	}
	return kv, ""
}

// SecretEnvNames returns the names of the entries of env (KEY=VALUE) that hold secrets.
func SecretEnvNames(env []string) []string {
	var names []string
	for _, kv := range env {
		if name, _ := SplitEnv(kv); IsSecretName(name) {
			names = append(names, name)
		}
	}
	return names
}

// SecretValues returns the values of the entries of env (KEY=VALUE) whose names
// hold secrets, skipping values too short to be one.
func SecretValues(env []string) []string {
	var vals []string
	for _, kv := range env {
		name, v := SplitEnv(kv)
		if IsSecretName(name) && len(strings.TrimSpace(v)) >= minEnvSecret {
			vals = append(vals, v)
		}
	}
	return vals
}

// FromEnv returns a Redactor for the secret values of env plus the extra values.
func FromEnv(env []string, extra ...string) *Redactor {
	return New(append(SecretValues(env), extra...)...)
}
