package phonesetup

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// SplitList splits a comma- or space-separated answer.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		out = append(out, f)
	}
	return out
}

// SplitHostPort reads "host:port" or "host" (then port def).
func SplitHostPort(s string, def int) (string, int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("give the server as host:port, like imap.example.com:993")
	}
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.Trim(s, "[]"), def, nil
		}
		return "", 0, fmt.Errorf("%q is not host:port; write it like imap.example.com:993", s)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("%q has no valid port; write it like imap.example.com:993", s)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host; write it like imap.example.com:993", s)
	}
	return host, port, nil
}

func portOr(p, def int) int {
	if p == 0 {
		return def
	}
	return p
}
