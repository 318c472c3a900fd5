package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// envLine is one KEY=VALUE assignment of an environment file and the lines
// (1-based) it spans.
type envLine struct {
	key, value  string
	first, last int
}

// parseEnv reads the subset of systemd's EnvironmentFile= syntax that a POSIX
// shell reads the same way: blank lines, comments starting with # or ;, an
// optional "export ", and KEY=VALUE where VALUE is 'single-quoted' (verbatim),
// "double-quoted" (with \" \\ \$ \` escapes) or bare (with \x escapes).
// Values spanning lines are refused. Errors name the line and the key, never
// the value.
func parseEnv(data []byte) ([]envLine, error) {
	var out []envLine
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		line := strings.TrimLeft(strings.TrimSuffix(raw, "\r"), " \t")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return nil, fmt.Errorf("line %d is not KEY=VALUE", n)
		}
		key := strings.TrimRight(line[:eq], " \t")
		if !isEnvName(key) {
			// The text is not quoted: it may be a pasted password.
			return nil, fmt.Errorf("line %d: the text before = is not a variable name", n)
		}
		value, err := parseEnvValue(strings.TrimLeft(line[eq+1:], " \t"))
		if err != nil {
			return nil, fmt.Errorf("line %d: the value of %s %w", n, key, err)
		}
		out = append(out, envLine{key: key, value: value, first: n, last: n})
	}
	return out, nil
}

var errEnvTrailing = errors.New("has text after its closing quote")

func parseEnvValue(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	var b strings.Builder
	switch v[0] {
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", errors.New("opens a quote that does not close on the same line")
		}
		if strings.Trim(v[end+2:], " \t") != "" {
			return "", errEnvTrailing
		}
		return v[1 : end+1], nil
	case '"':
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '"':
				if strings.Trim(v[i+1:], " \t") != "" {
					return "", errEnvTrailing
				}
				return b.String(), nil
			case c == '\\' && i+1 < len(v):
				if strings.IndexByte("\"\\`$", v[i+1]) >= 0 {
					i++
					b.WriteByte(v[i])
				} else {
					b.WriteByte(c)
				}
			case c == '\\':
				return "", errors.New("ends with a backslash (values on several lines are not supported)")
			default:
				b.WriteByte(c)
			}
		}
		return "", errors.New("opens a quote that does not close on the same line")
	}
	v = strings.TrimRight(v, " \t")
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' {
			if i+1 == len(v) {
				return "", errors.New("ends with a backslash (values on several lines are not supported)")
			}
			i++
			c = v[i]
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// formatEnvValue quotes s so that parseEnv, systemd and a shell all read s
// back: single quotes when s has none, double quotes with escapes otherwise.
func formatEnvValue(s string) (string, error) {
	if s == "" {
		return "", errors.New("is empty")
	}
	if strings.ContainsAny(s, "\x00\n\r") {
		return "", errors.New("contains a NUL or line break")
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'", nil
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("\"\\`$", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String(), nil
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
