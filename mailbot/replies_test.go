package mailbot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replyFixtures: what each phone reply in testdata/replies must yield.
var replyFixtures = []struct {
	file     string
	verb     Verb
	words    string
	code     string
	codeFrom string
	html     bool // the text comes from an HTML part
}{
	{"gmail_web", VerbHint, "use the v2 API", code1, CodeFromSubject, false},
	{"gmail_android", VerbRetry, "", code1, CodeFromSubject, false},
	{"gmail_ios_wrapped", VerbSkip, "", code1, CodeFromSubject, false},
	{"apple_iphone", VerbAccept, "", code1, CodeFromSubject, false},
	{"outlook_desktop", VerbHint, "the flaky test needs the DB fixture", code1, CodeFromSubject, false},
	{"outlook_ios", VerbRetry, "", code1, CodeFromSubject, false},
	{"bottom_posted", VerbPlan, "split the migration into two tasks", code1, CodeFromSubject, false},
	{"html_only", VerbHint, "use the v2 API", code1, CodeFromSubject, true},
	{"german_qp", VerbHint, "benutze die Größe aus der Konfiguration – nicht 5 MB", code1, CodeFromSubject, false},
	{"french_latin1", VerbHint, "réessaie avec le café", code1, CodeFromSubject, false},
	{"subject_only", VerbRetry, "", code1, CodeFromSubject, false},
	{"pause_repo", VerbPause, "web-app", "", "", false},
	{"signature_dashes", VerbHint, "use the v2 API", code1, CodeFromSubject, false},
	{"japanese", VerbHint, "設定ファイルの値を使って", code1, CodeFromSubject, false},
	{"hint_multiline", VerbHint, "use the v2 API.\nKeep the old endpoint until the clients moved.", code1, CodeFromSubject, false},
	{"status", VerbStatus, "", "", "", false},
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/replies", name+".eml"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n", "\r\n"))
}

// TestPhoneReplies signs each real-world-shaped reply as the owner's
// provider would and runs the whole decision: each must act with exactly
// its command, words and code.
func TestPhoneReplies(t *testing.T) {
	files, _ := filepath.Glob("testdata/replies/*.eml")
	if len(files) != len(replyFixtures) {
		t.Errorf("%d fixture files, %d expectations", len(files), len(replyFixtures))
	}
	keys()
	for _, fx := range replyFixtures {
		t.Run(fx.file, func(t *testing.T) {
			raw := readFixture(t, fx.file)
			m, err := parseMessage(raw)
			if err != nil {
				t.Fatal(err)
			}
			if m.fromHTML != fx.html {
				t.Errorf("text from HTML = %v, want %v", m.fromHTML, fx.html)
			}
			// The Date of the fixtures is 2 minutes before testNow.
			signed := sign(t, raw, ownerRSA, nil)
			v := decideWith(t, signed, nil, nil, nil)
			if v.Outcome != OutcomeAct {
				t.Fatalf("outcome %s (%s); new text %q", v.Outcome, v.Reason, TrimReply(m.text))
			}
			c := v.Command
			if c.Verb != fx.verb || c.Words != fx.words || c.Code != fx.code || c.CodeFrom != fx.codeFrom {
				t.Errorf("got verb=%s words=%q code=%s from=%s\nwant verb=%s words=%q code=%s from=%s",
					c.Verb, c.Words, c.Code, c.CodeFrom, fx.verb, fx.words, fx.code, fx.codeFrom)
			}
		})
	}
}
