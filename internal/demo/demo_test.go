package demo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
)

func needShell(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the demo's scripts need a POSIX shell")
	}
}

func TestRunTellsTheWholeLoopAndRemovesItsFolder(t *testing.T) {
	needShell(t)
	tmp := t.TempDir()
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Out: &out, TempDir: tmp})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	want := Result{Dir: res.Dir, Code: res.Code, ProblemEmails: 1, Confirmations: 1, JobDoneEmails: 1, Answers: 0,
		Obeyed: 1, Refused: 1, Merged: 3, Tasks: 3, JobState: "done", Branch: "agentkit/integration", Head: res.Head, Elapsed: res.Elapsed}
	if res != want {
		t.Errorf("result:\n got %+v\nwant %+v", res, want)
	}
	if len(res.Code) != 6 || len(res.Head) != 40 {
		t.Errorf("code %q, head %q", res.Code, res.Head)
	}
	if !strings.HasPrefix(res.Dir, tmp) && !strings.Contains(res.Dir, filepath.Base(tmp)) {
		t.Errorf("the demo's folder %s is not under %s", res.Dir, tmp)
	}
	if _, err := os.Stat(res.Dir); !os.IsNotExist(err) {
		t.Errorf("the demo's folder is still there (%v)", err)
	}
	if !strings.Contains(out.String(), "Removed "+res.Dir) {
		t.Errorf("the story does not say the folder was removed:\n%s", out.String())
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	needShell(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Options{TempDir: tmp})
	if err == nil {
		t.Fatal("a cancelled demo reported success")
	}
	if !strings.Contains(err.Error(), "--keep") {
		t.Errorf("the error does not say how to keep the files: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a cancelled demo left %s behind", left[0].Name())
	}
}

func TestCheckSaysGitIsMissing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the demo refuses Windows before looking for git")
	}
	t.Setenv("PATH", t.TempDir())
	err := Check()
	if err == nil || !strings.Contains(err.Error(), "needs git") || !strings.Contains(err.Error(), "install") {
		t.Fatalf("Check without git: %v", err)
	}
}

// runScript runs one of the demo's shell scripts in dir.
func runScript(t *testing.T, dir, script string, env ...string) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("the brief\n")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestBuilderWritesEachPageAndRewordsWhenCalledAgain(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	for _, p := range pages {
		out, code := runScript(t, dir, builderScript(), "AGENTKIT_TASK="+p.Task)
		if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), `{"agentkit": {"status": "done"}}`) {
			t.Fatalf("%s: exit %d\n%s", p.Task, code, out)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, p.File)); string(got) != p.Text {
			t.Errorf("%s wrote %q, want %q", p.Task, got, p.Text)
		}
	}
	// Called again in the same work tree, the about page is reworded.
	if _, code := runScript(t, dir, builderScript(), "AGENTKIT_TASK="+stoppedTask); code != 0 {
		t.Fatalf("the second call failed")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, pageFile(stoppedTask))); string(got) != pages[1].Again {
		t.Errorf("the second call wrote %q", got)
	}
	if out, code := runScript(t, dir, builderScript(), "AGENTKIT_TASK=nope"); code == 0 || !strings.Contains(out, "no page is scripted for task nope") {
		t.Errorf("an unknown task: exit %d, %s", code, out)
	}
}

func TestSpellcheckFailsUntilTheOwnerAddsTheWord(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	dict := filepath.Join(t.TempDir(), "dictionary.txt")
	if err := os.WriteFile(dict, []byte(dictionary()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := os.WriteFile(filepath.Join(dir, p.File), []byte(p.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code := runScript(t, dir, spellcheckScript, "SPELL_DICTIONARY="+dict)
	if code != 1 || strings.TrimSpace(out) != `about.txt: "agentkit" is not in the dictionary` {
		t.Fatalf("with the word missing: exit %d\n%s", code, out)
	}
	// The builder's rewording alone does not help.
	if err := os.WriteFile(filepath.Join(dir, "about.txt"), []byte(pages[1].Again), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code := runScript(t, dir, spellcheckScript, "SPELL_DICTIONARY="+dict); code != 1 {
		t.Fatalf("the reworded page passed without the word")
	}
	f, err := os.OpenFile(dict, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(unknownWord + "\n")
	f.Close()
	if out, code := runScript(t, dir, spellcheckScript, "SPELL_DICTIONARY="+dict); code != 0 || strings.TrimSpace(out) != "spelling ok" {
		t.Fatalf("with the word added: exit %d\n%s", code, out)
	}
	if out, code := runScript(t, dir, spellcheckScript); code == 0 || !strings.Contains(out, "SPELL_DICTIONARY") {
		t.Errorf("without a dictionary: exit %d, %s", code, out)
	}
}

func TestDictionaryLacksOnlyTheUnknownWord(t *testing.T) {
	list := strings.Fields(dictionary())
	if slices.Contains(list, unknownWord) {
		t.Fatalf("the dictionary already has %q", unknownWord)
	}
	for _, p := range pages {
		for _, w := range words(p.Text + p.Again) {
			if w != unknownWord && !slices.Contains(list, w) {
				t.Errorf("the dictionary lacks %q of %s", w, p.Task)
			}
		}
	}
	if !slices.IsSorted(list) {
		t.Error("the dictionary is not sorted")
	}
}

func TestTappedReplyIsSignedForTheDemoDNS(t *testing.T) {
	o, err := newOwner()
	if err != nil {
		t.Fatal(err)
	}
	link := "mailto:agentkit@bot.example?subject=Re%3A%20%5Bagentkit%5D%20BCDFGH%20bakery%3A%20gate%20failed&body=retry"
	rep, err := tap(link)
	if err != nil {
		t.Fatal(err)
	}
	if rep.To != "agentkit@bot.example" || rep.Subject != "Re: [agentkit] BCDFGH bakery: gate failed" || !strings.HasPrefix(rep.Body, "retry\n") {
		t.Fatalf("tap: %+v", rep)
	}
	raw, err := o.Compose(rep, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	verifs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: o.LookupTXT})
	if err != nil || len(verifs) != 1 || verifs[0].Err != nil || verifs[0].Domain != "owner.example" {
		t.Fatalf("verification: %+v %v", verifs, err)
	}
	for _, h := range []string{"from", "date", "message-id", "subject"} {
		if !slices.ContainsFunc(verifs[0].HeaderKeys, func(k string) bool { return strings.EqualFold(k, h) }) {
			t.Errorf("the signature does not cover %s: %v", h, verifs[0].HeaderKeys)
		}
	}
	// Another key under the same name does not verify: the DNS answers
	// only for this run's key.
	other, _ := newOwner()
	if v, _ := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: other.LookupTXT}); len(v) != 1 || v[0].Err == nil {
		t.Error("the reply verified against another run's key")
	}
	unsigned, err := o.Compose(rep, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := dkim.Verify(bytes.NewReader(unsigned)); len(v) != 0 {
		t.Error("the unsigned message carries a signature")
	}
	if _, err := tap("https://example.com"); err == nil {
		t.Error("tap accepted a link that is not mailto:")
	}
	if _, err := o.LookupTXT("other._domainkey.owner.example"); err == nil {
		t.Error("the demo DNS answered for another name")
	}
}

func TestEmailShowsTheTextAndTheReplyLinks(t *testing.T) {
	raw := strings.ReplaceAll(`From: "agentkit" <agentkit@bot.example>
To: <owner@owner.example>
Subject: [agentkit] BCDFGH bakery: gate fast failed
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

agentkit stopped work in bakery and needs your answer.


Problem BCDFGH: gate failed
Reply with one of:

retry
  run the stopped step again (after you fixed the cause)
  mailto:agentkit@bot.example?subject=3DRe&body=3Dretry

hint <words>
  the same builder continues its session with your words
  mailto:agentkit@bot.example?subject=3DRe&body=3Dhint%20

--=20
agentkit obeys replies only from owner@owner.example.
`, "\n", "\r\n")
	e, err := readEmail([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if e.From != "agentkit <agentkit@bot.example>" || e.Subject != "[agentkit] BCDFGH bakery: gate fast failed" {
		t.Errorf("from %q, subject %q", e.From, e.Subject)
	}
	if got := strings.Join(e.Text("Reply with one of:"), "|"); got != "agentkit stopped work in bakery and needs your answer.||Problem BCDFGH: gate failed" {
		t.Errorf("text: %q", got)
	}
	if got := e.Text(""); got[len(got)-1] != "  mailto:agentkit@bot.example?subject=Re&body=hint%20" {
		t.Errorf("the whole text runs into the signature: %q", got)
	}
	want := []option{
		{Reply: "retry", Meaning: "run the stopped step again (after you fixed the cause)", Link: "mailto:agentkit@bot.example?subject=Re&body=retry"},
		{Reply: "hint <words>", Meaning: "the same builder continues its session with your words", Link: "mailto:agentkit@bot.example?subject=Re&body=hint%20"},
	}
	if got := e.Options(); !slices.Equal(got, want) {
		t.Errorf("options:\n got %+v\nwant %+v", got, want)
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		parts []string
		width int
		sep   string
		want  []string
	}{
		{[]string{"built 1a2b3c4", "gate passed", "merged"}, 66, ", ", []string{"built 1a2b3c4, gate passed, merged"}},
		{[]string{"aaaa", "bbbb", "cccc"}, 11, ", ", []string{"aaaa, bbbb,", "cccc"}},
		{strings.Fields("the message has no DKIM signature"), 16, " ", []string{"the message has", "no DKIM", "signature"}},
		{[]string{"a-part-longer-than-the-width", "b"}, 5, " ", []string{"a-part-longer-than-the-width", "b"}},
		{nil, 10, " ", nil},
	} {
		if got := wrap(c.parts, c.width, c.sep); !slices.Equal(got, c.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.parts, c.width, got, c.want)
		}
	}
}
