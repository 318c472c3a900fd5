package mailbot

import (
	"bytes"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"

	"github.com/agentkit/agentkit/internal/status"
	"github.com/agentkit/agentkit/problems"
)

var updateRender = flag.Bool("update-render", false, "rewrite testdata/render golden files")

// renderProblem is a problem as the supervisor would write it.
func renderProblem() *problems.Problem {
	return &problems.Problem{
		Code: "BCDFGH", Repo: "shop", Job: "add-login", Task: "api-tests", Kind: problems.GateFailed,
		Summary: "gate fast failed: 2 tests in ./auth (go test ./...)",
		Detail:  "The builder's change passed review, but the fast gate failed the same way after two automatic retries: TestLogin and TestLogout expect a 200 and get a 401 since the middleware change.",
		LogTail: "=== RUN   TestLogin\n    login_test.go:42: got 401, want 200\n--- FAIL: TestLogin (0.01s)\nAuthorization: Bearer abcdef0123456789abcdef\nFAIL\tshop/auth\t0.214s\n",
		Replies: problems.GateFailed.Replies(),
	}
}

// golden compares got with testdata/render/name, rewriting it with -update-render.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "render", name)
	if *updateRender {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update-render to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestRenderBodiesGolden(t *testing.T) {
	p := renderProblem()
	owners := []string{"owner@owner.test"}
	golden(t, "problem.txt", problemBody(p, "bot@example.test", owners, "hunter2-password"))

	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	d := &problems.Decision{Code: p.Code, Reply: problems.Hint, Words: "use the v2 API, not v1", Channel: problems.Email, Who: "owner@owner.test", At: at, Outcome: "the builder continued with the hint; the fast gate passed"}
	golden(t, "confirmation.txt", confirmationBody(p, d, owners))

	a := answerPayload{Kind: answerRefused, Why: "Problem BCDFGH cannot be fixed by accept.", Fix: "Reply with one of: retry, hint <words>, skip, plan <words>."}
	golden(t, "refused.txt", refusedBody(a, helpText(owners, 10)))

	st := status.Status{OpenProblems: 1, Repos: []status.RepoStatus{{Name: "shop", OpenProblems: 1, Paused: true, PausedBy: "owner@owner.test (email)"}, {Name: "blog"}}}
	golden(t, "status.txt", statusBody(st, []*problems.Problem{p}, at))

	j := parseJobDone(`{"repo":"shop","job":"add-login","summary":"3 tasks merged; the full gate passed","detail":"Merged into agentkit/add-login at 1a2b3c4."}`)
	golden(t, "jobdone.txt", jobDoneSubject(j)+"\n\n"+jobDoneBody(j, owners))
}

func TestRenderProblemBodyShape(t *testing.T) {
	p := renderProblem()
	p.LogTail = strings.Repeat("line of a long build log that goes on\n", 60) + "api_key = sk-live-0123456789abcdefghijklmnop\n"
	body := problemBody(p, "bot@example.test", []string{"owner@owner.test"}, "hunter2-password")
	if strings.Contains(body, "sk-live-0123456789") {
		t.Fatal("a key reached the body")
	}
	if got := strings.Count(body, "line of a long build log"); got != MaxLogLines-1 {
		t.Errorf("%d log lines quoted, want the last %d (with the key line)", got, MaxLogLines)
	}
	for _, line := range strings.Split(body, "\n") {
		if utf8.RuneCountInString(line) > wrapWidth && !strings.Contains(line, "mailto:") {
			t.Errorf("line wider than %d: %q", wrapWidth, line)
		}
	}
}

func TestRenderMessageHeaders(t *testing.T) {
	env := envelope{From: "bot@example.test", To: "owner@owner.test", MessageID: "x.1@agentkit.example.test",
		Date: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), Subject: "Re: [agentkit] BCDFGH shop: ünïcode summary",
		InReplyTo: []string{"r@owner.test"}, References: []string{"p@agentkit.example.test", "r@owner.test"}}
	data, err := buildMessage(env, "héllo\nwörld\n")
	if err != nil {
		t.Fatal(err)
	}
	if f, to, sub := bytes.Index(data, []byte("\nFrom: ")), bytes.Index(data, []byte("\nTo: ")), bytes.Index(data, []byte("\nSubject: ")); f < 0 || f > to || to > sub {
		t.Errorf("From, To and Subject are not in reading order:\n%s", data)
	}
	r, err := mail.CreateReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header
	if s, _ := h.Subject(); s != env.Subject {
		t.Errorf("subject %q", s)
	}
	if id, _ := h.MessageID(); id != env.MessageID {
		t.Errorf("Message-ID %q", id)
	}
	if refs, _ := h.MsgIDList("References"); len(refs) != 2 || refs[1] != "r@owner.test" {
		t.Errorf("References %v", refs)
	}
	if h.Get("Auto-Submitted") != "auto-generated" || h.Get("X-Auto-Response-Suppress") != "All" {
		t.Error("not marked automatic")
	}
	if h.Get("Reply-To") != "" {
		t.Error("a Reply-To was written")
	}
	for _, line := range bytes.Split(data, []byte("\r\n")) {
		for _, c := range line {
			if c >= 0x80 {
				t.Fatalf("a raw 8-bit byte in the message (%q): headers and body must be encoded", line)
			}
		}
	}
}

func TestMailtoEscape(t *testing.T) {
	cases := map[string]string{
		"Re: [agentkit] BCDFGH shop: a&b=c?d#e": "Re%3A%20%5Bagentkit%5D%20BCDFGH%20shop%3A%20a%26b%3Dc%3Fd%23e",
		"hint ":                                 "hint%20",
		"1+1 ü":                                 "1%2B1%20%C3%BC",
	}
	for in, want := range cases {
		if got := mailtoEscape(in); got != want {
			t.Errorf("mailtoEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzMailtoEscape(f *testing.F) {
	for _, s := range []string{"Re: [agentkit] BCDFGH shop: x", "hint ", "a&b=c", "ü%20+", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := mailtoEscape(s)
		for i := 0; i < len(e); i++ {
			c := e[i]
			ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~%", c) >= 0
			if !ok {
				t.Fatalf("%q escapes to %q with %q", s, e, c)
			}
		}
		u, err := url.Parse("mailto:bot@example.test?subject=" + e + "&body=" + e)
		if err != nil {
			t.Fatal(err)
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil || q.Get("subject") != s || q.Get("body") != s {
			t.Fatalf("%q does not survive a mailto link: %v %q", s, err, q)
		}
	})
}

func TestWrapText(t *testing.T) {
	in := "one two three four five six seven eight nine ten eleven twelve\n\n    indented code line that is long and must stay as it is, unwrapped\nshort"
	got := wrapText(in, 20)
	want := "one two three four\nfive six seven eight\nnine ten eleven\ntwelve\n\n    indented code line that is long and must stay as it is, unwrapped\nshort"
	if got != want {
		t.Errorf("wrapText:\n%s\nwant:\n%s", got, want)
	}
}

func TestReplySubject(t *testing.T) {
	for in, want := range map[string]string{
		"[agentkit] X": "Re: [agentkit] X", "Re: status": "Re: status", "RE: re: help": "Re: help", "": "Re: ",
	} {
		if got := replySubject(in); got != want {
			t.Errorf("replySubject(%q) = %q, want %q", in, got, want)
		}
	}
}
