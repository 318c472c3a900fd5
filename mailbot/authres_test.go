package mailbot

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/emersion/go-message/textproto"
	"github.com/emersion/go-msgauth/authres"
)

func TestParseAuthResultsTable(t *testing.T) {
	cases := []struct {
		name, in string
		want     AuthResults
	}{
		{
			name: "OpenDKIM comment with a semicolon",
			in:   "mx.owner.test;\r\n\tdkim=pass (2048-bit key; unprotected) header.d=owner.test header.i=@owner.test header.b=\"VVA3HpHe\";\r\n\tdkim-atps=neutral",
			want: AuthResults{AuthservID: "mx.owner.test", Results: []AuthResult{
				{Method: "dkim", Result: "pass", Props: map[string]string{"header.d": "owner.test", "header.i": "@owner.test", "header.b": "VVA3HpHe"}},
				{Method: "dkim-atps", Result: "neutral"},
			}},
		},
		{
			name: "SPF comment holding client-ip and helo with semicolons",
			in:   "mx.example.net; spf=pass (mx.example.net: domain of a@owner.test designates 192.0.2.1 as permitted sender; client-ip=192.0.2.1; helo=mail.owner.test) smtp.mailfrom=a@owner.test smtp.helo=mail.owner.test",
			want: AuthResults{AuthservID: "mx.example.net", Results: []AuthResult{
				{Method: "spf", Result: "pass", Props: map[string]string{"smtp.mailfrom": "a@owner.test", "smtp.helo": "mail.owner.test"}},
			}},
		},
		{
			name: "no authserv-id (Microsoft)",
			in:   "spf=pass (sender IP is 178.21.23.139)\r\n smtp.mailfrom=disroot.org; dkim=pass (signature was verified)\r\n header.d=disroot.org;dmarc=pass action=none\r\n header.from=disroot.org;compauth=pass reason=100",
			want: AuthResults{Results: []AuthResult{
				{Method: "spf", Result: "pass", Props: map[string]string{"smtp.mailfrom": "disroot.org"}},
				{Method: "dkim", Result: "pass", Props: map[string]string{"header.d": "disroot.org"}},
				{Method: "dmarc", Result: "pass", Props: map[string]string{"action": "none", "header.from": "disroot.org"}},
				{Method: "compauth", Result: "pass", Reason: "100"},
			}},
		},
		{
			name: "nested comments, quoted strings with parentheses and semicolons",
			in:   `example.org 1; dkim=fail reason="bad (really; bad) sig" (outer (inner; x) done) header.d=Example.ORG; spf=pass smtp.mailfrom="odd=local;part@example.org"`,
			want: AuthResults{AuthservID: "example.org", Version: "1", Results: []AuthResult{
				{Method: "dkim", Result: "fail", Reason: "bad (really; bad) sig", Props: map[string]string{"header.d": "Example.ORG"}},
				{Method: "spf", Result: "pass", Props: map[string]string{"smtp.mailfrom": "odd=local;part@example.org"}},
			}},
		},
		{
			name: "comment glued to the result, spaces around =",
			in:   "mx.zohomail.eu; dmarc=pass(p=reject dis=none)  header.from = <alice@buzon.uy>; dkim/1=PASS header.i=@buzon.uy",
			want: AuthResults{AuthservID: "mx.zohomail.eu", Results: []AuthResult{
				{Method: "dmarc", Result: "pass", Props: map[string]string{"header.from": "<alice@buzon.uy>"}},
				{Method: "dkim", Result: "pass", Props: map[string]string{"header.i": "@buzon.uy"}},
			}},
		},
		{
			name: "missing semicolon between results",
			in:   "mx.example.net; dkim=pass header.d=a.example spf=fail smtp.mailfrom=b.example",
			want: AuthResults{AuthservID: "mx.example.net", Results: []AuthResult{
				{Method: "dkim", Result: "pass", Props: map[string]string{"header.d": "a.example"}},
				{Method: "spf", Result: "fail", Props: map[string]string{"smtp.mailfrom": "b.example"}},
			}},
		},
		{
			name: "none",
			in:   "example.org 1; none",
			want: AuthResults{AuthservID: "example.org", Version: "1"},
		},
		{
			name: "unclosed comment runs to the end",
			in:   "mx.example.net; dkim=pass header.d=a.example (oops; spf=pass smtp.mailfrom=evil.example",
			want: AuthResults{AuthservID: "mx.example.net", Results: []AuthResult{
				{Method: "dkim", Result: "pass", Props: map[string]string{"header.d": "a.example"}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAuthResults(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "   ", "(only a comment)", ";"} {
		if _, err := ParseAuthResults(bad); err == nil {
			t.Errorf("ParseAuthResults(%q) succeeded", bad)
		}
	}
}

// corpusMessage is one file of the chatmail_core corpus.
type corpusMessage struct {
	receiver, file string
	from           string
	authRes        []string // values of Authentication-Results, top first
}

func readChatmailCorpus(t testing.TB) []corpusMessage {
	t.Helper()
	root := "testdata/chatmail_core/dkimchecks-2022-09-28"
	receivers, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusMessage
	for _, r := range receivers {
		files, err := os.ReadDir(filepath.Join(root, r.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files { // os.ReadDir sorts by name, the upstream order
			data, err := os.ReadFile(filepath.Join(root, r.Name(), f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(data)))
			if err != nil && h.Len() == 0 {
				t.Fatalf("%s/%s: %v", r.Name(), f.Name(), err)
			}
			m := corpusMessage{receiver: r.Name(), file: f.Name()}
			for fs := h.Fields(); fs.Next(); {
				switch fs.Key() {
				case "Authentication-Results":
					m.authRes = append(m.authRes, fs.Value())
				case "From":
					m.from = fs.Value()
				}
			}
			out = append(out, m)
		}
	}
	return out
}

var (
	validResults = map[string]bool{"pass": true, "fail": true, "softfail": true, "neutral": true, "none": true,
		"temperror": true, "permerror": true, "policy": true, "hardfail": true, "unknown": true,
		"skipped": true, "declined": true, "tempfail": true}
	rawPropRE   = regexp.MustCompile(`(?i)(?:^|[\s;])(header\.d|header\.i|header\.from|smtp\.mailfrom)=("[^"]*"|[^\s;()]+)`)
	rawMethodRE = regexp.MustCompile(`(?i)(?:^|[\s;])(dkim|spf|dmarc)=([a-z]+)`)
	// parenRE drops innermost parentheses, a cruder way than stripComments.
	parenRE = regexp.MustCompile(`\([^()]*\)`)
)

func dropParens(s string) string {
	for {
		t := parenRE.ReplaceAllString(s, " ")
		if t == s {
			return s
		}
		s = t
	}
}

// TestParseAuthResultsCorpus reads all 310 messages of chatmail_core: every
// header parses, and the methods, results and properties the verdict uses
// agree with a plain regular-expression reading of the raw header (the
// comments in this corpus never hold those words) and with go-msgauth's
// authres wherever that parser succeeds.
func TestParseAuthResultsCorpus(t *testing.T) {
	msgs := readChatmailCorpus(t)
	if len(msgs) != 310 {
		t.Fatalf("read %d messages, want 310", len(msgs))
	}
	headers, noID, msgauthAgreed := 0, 0, 0
	for _, m := range msgs {
		for _, v := range m.authRes {
			headers++
			ar, err := ParseAuthResults(v)
			if err != nil {
				t.Errorf("%s/%s: %v: %q", m.receiver, m.file, err, v)
				continue
			}
			if ar.AuthservID == "" {
				noID++
				if !strings.Contains(strings.SplitN(v, ";", 2)[0], "=") {
					t.Errorf("%s/%s: lost the authserv-id of %q", m.receiver, m.file, v)
				}
			}
			// Methods and results, as a raw reading sees them.
			var rawMR, gotMR []string
			raw := dropParens(v)
			for _, mm := range rawMethodRE.FindAllStringSubmatch(raw, -1) {
				rawMR = append(rawMR, strings.ToLower(mm[1]+"="+mm[2]))
			}
			for _, r := range ar.Results {
				if !validResults[r.Result] {
					t.Errorf("%s/%s: method %s has result %q", m.receiver, m.file, r.Method, r.Result)
				}
				if r.Method == "dkim" || r.Method == "spf" || r.Method == "dmarc" {
					gotMR = append(gotMR, r.Method+"="+r.Result)
				}
			}
			if !reflect.DeepEqual(rawMR, gotMR) {
				t.Errorf("%s/%s: methods %q, raw reading %q in %q", m.receiver, m.file, gotMR, rawMR, v)
			}
			// Properties.
			var rawP, gotP []string
			for _, pm := range rawPropRE.FindAllStringSubmatch(raw, -1) {
				rawP = append(rawP, strings.ToLower(pm[1])+"="+strings.Trim(pm[2], `"`))
			}
			for _, r := range ar.Results {
				for _, k := range []string{"header.d", "header.i", "header.from", "smtp.mailfrom"} {
					if val, ok := r.Props[k]; ok {
						gotP = append(gotP, k+"="+val)
					}
				}
			}
			sort.Strings(rawP)
			sort.Strings(gotP)
			if !reflect.DeepEqual(rawP, gotP) {
				t.Errorf("%s/%s: properties %q, raw reading %q in %q", m.receiver, m.file, gotP, rawP, v)
			}
			// go-msgauth, where it copes.
			id, results, err := authres.Parse(v)
			if err != nil {
				continue
			}
			msgauthAgreed++
			if id != "" && !strings.EqualFold(id, ar.AuthservID) {
				t.Errorf("%s/%s: authserv-id %q, go-msgauth %q", m.receiver, m.file, ar.AuthservID, id)
			}
			// go-msgauth keeps a comment glued to a result ("pass(p=reject)")
			// and the quotes of a quoted value; undo just that.
			val := func(v authres.ResultValue) string { s, _, _ := strings.Cut(string(v), "("); return s }
			var theirs []string
			for _, r := range results {
				switch r := r.(type) {
				case *authres.DKIMResult:
					theirs = append(theirs, "dkim="+val(r.Value)+" d="+r.Domain+" i="+r.Identifier)
				case *authres.SPFResult:
					theirs = append(theirs, "spf="+val(r.Value)+" mailfrom="+strings.Trim(r.From, `"`))
				case *authres.DMARCResult:
					theirs = append(theirs, "dmarc="+val(r.Value)+" from="+r.From)
				}
			}
			var ours []string
			for _, r := range ar.Results {
				switch r.Method {
				case "dkim":
					ours = append(ours, "dkim="+r.Result+" d="+r.Prop("header.d")+" i="+r.Prop("header.i"))
				case "spf":
					ours = append(ours, "spf="+r.Result+" mailfrom="+r.Prop("smtp.mailfrom"))
				case "dmarc":
					ours = append(ours, "dmarc="+r.Result+" from="+r.Prop("header.from"))
				}
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("%s/%s: ours %q, go-msgauth %q", m.receiver, m.file, ours, theirs)
			}
		}
	}
	t.Logf("%d messages, %d Authentication-Results headers, %d without authserv-id, %d also parsed by go-msgauth", len(msgs), headers, noID, msgauthAgreed)
	if headers < 300 || noID == 0 {
		t.Errorf("corpus reading looks wrong: %d headers, %d without id", headers, noID)
	}
}

// TestChatmailExpectedCrossCheck re-runs the upstream test's trust rule
// (described in testdata/chatmail_core/SOURCE.md; it is not agentkit's rule)
// on what ParseAuthResults read, and compares with expected.tsv: the 176
// asserted rows must equal the expected verdict, and every row must equal the
// re-simulated reference, which shows the parse saw what upstream saw.
func TestChatmailExpectedCrossCheck(t *testing.T) {
	msgs := readChatmailCorpus(t)
	data, err := os.ReadFile("testdata/chatmail_core/expected.tsv")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ expected, asserted, resim bool }
	rows := map[string]row{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		rows[f[0]+"/"+f[1]] = row{f[3] == "true", f[4] == "true", f[5] == "true"}
	}
	if len(rows) != 310 {
		t.Fatalf("expected.tsv has %d rows", len(rows))
	}
	var candidates map[string]bool
	receiver := ""
	asserted, resimDiff := 0, 0
	for _, m := range msgs {
		if m.receiver != receiver {
			receiver, candidates = m.receiver, nil
		}
		fromDomain := strings.ToLower(m.from[strings.LastIndex(m.from, "@")+1:])
		fromDomain = strings.TrimRight(fromDomain, ">")
		type verdict int
		const (
			nothing verdict = iota
			passed
			failed
		)
		type hdr struct {
			id string
			v  verdict
		}
		var hs []hdr
		ids := map[string]bool{}
		for _, v := range m.authRes {
			ar, err := ParseAuthResults(v)
			if err != nil {
				t.Fatalf("%s/%s: %v", m.receiver, m.file, err)
			}
			id := ar.AuthservID
			if id == "" {
				id = "\x00placeholder"
			}
			ids[id] = true
			h := hdr{id: id}
			for _, r := range ar.Results {
				if r.Method != "dkim" {
					continue
				}
				if r.Result != "pass" {
					h.v = failed
				} else if strings.EqualFold(r.Prop("header.d"), fromDomain) || strings.EqualFold(r.Prop("header.i"), "@"+fromDomain) {
					h.v = passed
				}
				break // only the first dkim result counts upstream
			}
			hs = append(hs, h)
		}
		if len(ids) > 0 {
			inter := map[string]bool{}
			for id := range ids {
				if candidates[id] {
					inter[id] = true
				}
			}
			if len(inter) > 0 {
				candidates = inter
			} else {
				candidates = ids
			}
		}
		got, counted := true, false
		for _, h := range hs {
			if !candidates[h.id] {
				continue
			}
			if !counted {
				got = false
				counted = true
			}
			if h.v != nothing {
				got = h.v == passed
				break
			}
		}
		key := m.receiver + "/" + m.file
		r, ok := rows[key]
		if !ok {
			t.Fatalf("%s missing from expected.tsv", key)
		}
		if r.asserted {
			asserted++
			if got != r.expected {
				t.Errorf("%s: verdict %v, upstream expects %v", key, got, r.expected)
			}
		}
		if got != r.resim {
			resimDiff++
			t.Errorf("%s: verdict %v, re-simulated reference %v", key, got, r.resim)
		}
	}
	if asserted != 176 {
		t.Errorf("%d asserted rows, want 176", asserted)
	}
	t.Logf("%d asserted rows matched, %d differences from the reference re-simulation", asserted, resimDiff)
}
