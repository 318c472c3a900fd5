package mailbot

import (
	"fmt"
	"strings"
)

// ThreadLookup returns the code of the problem whose email has the given
// Message-ID (without angle brackets); ok is false when it is not one.
type ThreadLookup func(messageID string) (code string, ok bool, err error)

// CodeSources are the places a problem code may be read from.
type CodeSources struct {
	// Text is the reply's new text (empty when the command came from the subject).
	Text string
	// Subject is the decoded Subject header.
	Subject string
	// InReplyTo and References are the thread's Message-IDs, without brackets.
	InReplyTo  []string
	References []string
}

// codeResolution is where the code was found and which headers that used.
type codeResolution struct {
	code, from string
	// headers the code rests on, which a DKIM signature must cover.
	headers []string
}

// ResolveCode finds the problem code in the text, then the subject, then
// the thread. Every source is read, and two different codes anywhere make
// the reply ambiguous (a *CommandError). No code at all returns "".
func ResolveCode(src CodeSources, lookup ThreadLookup) (code, from string, err error) {
	r, err := resolveCode(src, lookup)
	return r.code, r.from, err
}

func resolveCode(src CodeSources, lookup ThreadLookup) (codeResolution, error) {
	type found struct{ code, from, header string }
	var all []found
	for _, c := range FindCodes(src.Text) {
		all = append(all, found{c, CodeFromText, ""})
	}
	for _, c := range subjectCodes(src.Subject) {
		all = append(all, found{c, CodeFromSubject, "Subject"})
	}
	if lookup != nil {
		for _, h := range []struct {
			name string
			ids  []string
		}{{"In-Reply-To", src.InReplyTo}, {"References", src.References}} {
			for _, id := range h.ids {
				c, ok, err := lookup(id)
				if err != nil {
					return codeResolution{}, fmt.Errorf("looking up the thread's message %s: %w", id, err)
				}
				if ok {
					all = append(all, found{strings.ToUpper(c), CodeFromThread, h.name})
				}
			}
		}
	}
	if len(all) == 0 {
		return codeResolution{}, nil
	}
	var distinct []string
	var where []string
	for _, f := range all {
		if !contains(distinct, f.code) {
			distinct = append(distinct, f.code)
			where = append(where, f.code+" (in the "+f.from+")")
		}
	}
	if len(distinct) > 1 {
		return codeResolution{}, cmdErr("the reply names more than one problem: %s; answer each problem in its own reply", strings.Join(where, " and "))
	}
	r := codeResolution{code: all[0].code, from: all[0].from}
	if r.from != CodeFromText {
		for _, f := range all {
			if f.from == r.from && f.header != "" && !contains(r.headers, f.header) {
				r.headers = append(r.headers, f.header)
			}
		}
	}
	return r, nil
}
