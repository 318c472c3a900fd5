package problems_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentkit/agentkit/problems"
)

func TestTenThousandDistinctCodes(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	seen := make(map[problems.Code]bool, 10000)
	db := s.DB()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 10000 {
		c, err := s.CreateTx(ctx, tx, problems.New{Repo: "r", Kind: problems.Crashed, Summary: "crash"})
		if err != nil {
			t.Fatal(err)
		}
		if seen[c] {
			t.Fatalf("code %s issued twice", c)
		}
		seen[c] = true
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow("SELECT count(DISTINCT code) FROM problems").Scan(&n)
	if n != 10000 {
		t.Fatalf("%d distinct codes stored", n)
	}
}

// repeatReader hands out the same bytes for the first draws, then fresh ones.
type repeatReader struct {
	first []byte
	times int
	rest  io.Reader
	cur   *bytes.Reader
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.cur == nil || r.cur.Len() == 0 {
		if r.times == 0 {
			return r.rest.Read(p)
		}
		r.times--
		r.cur = bytes.NewReader(r.first)
	}
	return r.cur.Read(p)
}

func TestCollisionIsRedrawn(t *testing.T) {
	s := newStore(t)
	// The first two draws give the same code; the second must be redrawn.
	s.Rand = &repeatReader{first: []byte{0, 1, 2, 3, 4, 5}, times: 2, rest: bytes.NewReader([]byte{6, 7, 8, 9, 10, 11})}
	a := mustCreate(t, s, problems.New{})
	b := mustCreate(t, s, problems.New{})
	if a != "BCDFGH" || b != "JKMNPQ" {
		t.Fatalf("codes %s %s; want BCDFGH then the redraw JKMNPQ", a, b)
	}
}

func TestSchemaRefusesReusedCode(t *testing.T) {
	s := newStore(t)
	c := mustCreate(t, s, problems.New{})
	_, err := s.DB().Exec(`INSERT INTO problems (code, repo, kind, summary, replies, created_at, updated_at)
		VALUES (?, 'r', 'crashed', 'x', 'retry', '', '')`, c)
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("reused code accepted: %v", err)
	}
}

func TestCreateGetList(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return at }
	c := mustCreate(t, s, problems.New{Repo: "shop", Job: "j1", Task: "t1", Kind: problems.ScopeRequest,
		Summary: "needs\nfiles", Detail: "wants src/a.go", LogTail: "line1\nline2"})
	mustCreate(t, s, problems.New{Repo: "blog"})
	p, err := s.Get(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if p.Repo != "shop" || p.Job != "j1" || p.Task != "t1" || p.Kind != problems.ScopeRequest || p.State != problems.Open ||
		p.Summary != "needs files" || p.LogTail != "line1\nline2" || !p.CreatedAt.Equal(at) {
		t.Fatalf("%+v", p)
	}
	if got := problems.FormatVerbs(p.Replies); got != "dismiss, plan, skip" {
		t.Fatalf("replies %s", got)
	}
	if _, err := s.Get(ctx, "BBBBBB"); !errors.Is(err, problems.ErrNotFound) || err.Error() != "no problem BBBBBB (agentkit problem list --all shows every problem)" {
		t.Fatalf("%v", err)
	}
	all, _ := s.List(ctx, problems.Filter{})
	shop, _ := s.List(ctx, problems.Filter{Repo: "shop"})
	if len(all) != 2 || len(shop) != 1 || shop[0].Code != c || shop[0].LogTail != "" {
		t.Fatalf("list: %d %d", len(all), len(shop))
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, n := range []problems.New{
		{Repo: "r", Kind: "exploded", Summary: "x"},
		{Repo: "", Kind: problems.Crashed, Summary: "x"},
		{Repo: "r", Kind: problems.Crashed, Summary: " \n"},
		{Repo: "r", Kind: problems.AuthRequired, Summary: "x", Replies: []problems.Verb{problems.Hint}},
	} {
		if _, err := s.Create(ctx, n); err == nil {
			t.Errorf("Create(%+v) accepted", n)
		}
	}
}

func TestAnswerRules(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := mustCreate(t, s, problems.New{Kind: problems.AuthRequired, Summary: "not logged in"})
	_, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Hint, Words: "x"}, Channel: problems.Terminal, Who: "me"})
	var no *problems.NotOfferedError
	if !errors.As(err, &no) || err.Error() != "problem "+string(c)+" does not offer hint; it offers: retry, skip" {
		t.Fatalf("%v", err)
	}
	d, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Email, Who: "o@x.test", SourceID: "<m1@x.test>"})
	if err != nil {
		t.Fatal(err)
	}
	// The same message again is the same decision.
	again, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Email, Who: "o@x.test", SourceID: "<m1@x.test>"})
	if err != nil || again.ID != d.ID {
		t.Fatalf("idempotent answer: %+v %v", again, err)
	}
	// A second answer is refused and says how it was answered.
	_, err = s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Skip}, Channel: problems.Terminal, Who: "me"})
	if !errors.Is(err, problems.ErrNotOpen) || !strings.Contains(err.Error(), `answered "retry" by o@x.test through email`) {
		t.Fatalf("%v", err)
	}
	// One message cannot answer two problems.
	c2 := mustCreate(t, s, problems.New{})
	if _, err := s.Answer(ctx, c2, problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Email, Who: "o@x.test", SourceID: "<m1@x.test>"}); err == nil {
		t.Fatal("one message answered two problems")
	}
	if _, err := s.Answer(ctx, "BBBBBB", problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Terminal, Who: "me"}); !errors.Is(err, problems.ErrNotFound) {
		t.Fatalf("%v", err)
	}
	p, _ := s.Get(ctx, c)
	if p.State != problems.Answered || p.Decision == nil || p.Decision.Reply != problems.Retry {
		t.Fatalf("%+v", p)
	}
	pending, err := s.Pending(ctx, "")
	if err != nil || len(pending) != 1 || pending[0].Code != c {
		t.Fatalf("pending %v %v", pending, err)
	}
	if err := s.MarkApplied(ctx, d.ID, "ran the gate again"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkApplied(ctx, d.ID, "again"); !errors.Is(err, problems.ErrAlreadyApplied) {
		t.Fatalf("second MarkApplied: %v", err)
	}
	p, _ = s.Get(ctx, c)
	if p.State != problems.Closed || p.Decision.Outcome != "ran the gate again" || !p.Decision.Applied() {
		t.Fatalf("%+v %+v", p, p.Decision)
	}
	if pending, _ := s.Pending(ctx, ""); len(pending) != 0 {
		t.Fatalf("still pending: %v", pending)
	}
}

func TestConcurrentAnswersYieldOneDecision(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := mustCreate(t, s, problems.New{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, refusals := 0, 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Retry}, Channel: problems.Terminal, Who: "w" + string(rune('a'+i))})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, problems.ErrNotOpen):
				refusals++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	var n int
	s.DB().QueryRow("SELECT count(*) FROM decisions").Scan(&n)
	if wins != 1 || refusals != 15 || n != 1 {
		t.Fatalf("wins %d refusals %d decisions %d", wins, refusals, n)
	}
}

func TestOutboxFollowsPhoneChannel(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	count := func(st string) int {
		var n int
		s.DB().QueryRow("SELECT count(*) FROM outbox WHERE state = ?", st).Scan(&n)
		return n
	}
	mustCreate(t, s, problems.New{})
	if count("held") != 1 || count("pending") != 0 {
		t.Fatal("a problem made while the phone is off must be held")
	}
	if err := s.SetPhoneEnabled(ctx, true); err != nil {
		t.Fatal(err)
	}
	c := mustCreate(t, s, problems.New{})
	if count("pending") != 1 {
		t.Fatal("a problem made while the phone is on must be pending")
	}
	d, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Skip}, Channel: problems.Terminal, Who: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkApplied(ctx, d.ID, "skipped"); err != nil {
		t.Fatal(err)
	}
	var kind string
	s.DB().QueryRow("SELECT kind FROM outbox WHERE decision_id = ?", d.ID).Scan(&kind)
	if kind != "confirmation" || count("pending") != 2 {
		t.Fatalf("confirmation row: %q, pending %d", kind, count("pending"))
	}
	if n, err := s.ReleaseHeld(ctx); err != nil || n != 1 || count("held") != 0 {
		t.Fatalf("release: %d %v", n, err)
	}
}

func TestPause(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if p, _ := s.Paused(ctx, "shop"); p.Paused {
		t.Fatal("paused by default")
	}
	s.SetPaused(ctx, "shop", true, "me", problems.Terminal)
	if p, _ := s.Paused(ctx, "shop"); !p.Paused || p.Who != "me" || p.Repo != "shop" {
		t.Fatalf("%+v", p)
	}
	if p, _ := s.Paused(ctx, "blog"); p.Paused {
		t.Fatal("blog paused by shop's pause")
	}
	s.SetPaused(ctx, "", true, "o@x.test", problems.Email)
	if p, _ := s.Paused(ctx, "blog"); !p.Paused || p.Channel != problems.Email {
		t.Fatalf("%+v", p)
	}
	s.SetPaused(ctx, "", false, "me", problems.Terminal)
	for _, r := range []string{"shop", "blog"} {
		if p, _ := s.Paused(ctx, r); p.Paused {
			t.Fatalf("%s still paused after resume of all", r)
		}
	}
}

func TestCreateRedactsSecrets(t *testing.T) {
	t.Setenv("AGENTKIT_PHONE_PASSWORD", "hunter2-phone-secret")
	s := newStore(t) // the store reads the environment when it is made
	c := mustCreate(t, s, problems.New{Summary: "auth failed with hunter2-phone-secret",
		Detail: "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB was refused", LogTail: "password=hunter2-phone-secret\nok"})
	p, err := s.Get(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{p.Summary, p.Detail, p.LogTail} {
		if strings.Contains(field, "hunter2-phone-secret") || strings.Contains(field, "ghp_0123456789") {
			t.Fatalf("secret stored: %q", field)
		}
		if !strings.Contains(field, "[REDACTED]") {
			t.Fatalf("nothing was masked in %q", field)
		}
	}
}

// List reads rows packed into one column; it must return what Get returns,
// even for texts holding the separator it uses.
func TestListMatchesGet(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := mustCreate(t, s, problems.New{Repo: "shop", Job: "j1", Task: "t1", Kind: problems.ScopeRequest,
		Summary: "needs\x1ffiles", Detail: "wants\x1fsrc/a.go\nand more"})
	d, err := s.Answer(ctx, c, problems.Answer{Reply: problems.Reply{Verb: problems.Dismiss}, Channel: problems.Email, Who: "o@x.test", SourceID: "<m@x>"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, problems.Filter{All: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	l := list[0]
	if l.Code != got.Code || l.Repo != got.Repo || l.Job != got.Job || l.Task != got.Task || l.Kind != got.Kind ||
		l.Summary != got.Summary || l.Detail != got.Detail || l.State != got.State || !l.CreatedAt.Equal(got.CreatedAt) ||
		!l.UpdatedAt.Equal(got.UpdatedAt) || problems.FormatVerbs(l.Replies) != problems.FormatVerbs(got.Replies) {
		t.Fatalf("list %+v\nget  %+v", l, got)
	}
	if l.Decision == nil || l.Decision.ID != d.ID || l.Decision.Who != "o@x.test" {
		t.Fatalf("decision %+v", l.Decision)
	}
	if got.Summary != "needs files" || got.Detail != "wants src/a.go\nand more" {
		t.Fatalf("separator kept: %q %q", got.Summary, got.Detail)
	}
}
