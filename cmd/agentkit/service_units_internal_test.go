package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
	"github.com/agentkit/agentkit/secrets"
	"github.com/agentkit/agentkit/supervisor"
)

// logSink is a log the service writes while the test reads it.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeRunner counts its runs and blocks until its context ends, after
// panicking on the runs its panics says.
type fakeRunner struct {
	runs   *atomic.Int32
	live   *atomic.Int32
	panics int32
	grace  atomic.Int64
	woken  atomic.Int32
}

func (f *fakeRunner) Run(ctx context.Context) error {
	n := f.runs.Add(1)
	if n <= f.panics {
		panic("the supervisor of this repository broke")
	}
	if f.live.Add(1) > 1 {
		panic("two runs of one unit at once")
	}
	defer f.live.Add(-1)
	<-ctx.Done()
	return nil
}

func (f *fakeRunner) SetStopGrace(d time.Duration) { f.grace.Store(int64(d)) }
func (f *fakeRunner) Wake()                        { f.woken.Add(1) }

func newFake(panics int32) *fakeRunner {
	return &fakeRunner{runs: &atomic.Int32{}, live: &atomic.Int32{}, panics: panics}
}

// testController is a controller over a fresh store with fake workers.
type testController struct {
	*controller
	t      *testing.T
	db     *state.DB
	log    *logSink
	host   *service.Host
	sups   map[string]*fakeRunner
	bot    *fakeRunner
	pw     atomic.Pointer[string]
	cancel context.CancelFunc
	ctx    context.Context
}

func newTestController(t *testing.T, panics map[string]int32) *testController {
	t.Helper()
	home := t.TempDir()
	db, err := state.Open(context.Background(), filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sink := &logSink{}
	log := slog.New(slog.NewJSONHandler(sink, nil))
	instant := func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	host := &service.Host{Log: log, After: instant}
	tc := &testController{t: t, db: db, log: sink, host: host, sups: map[string]*fakeRunner{}, bot: newFake(0)}
	tc.ctx, tc.cancel = context.WithCancel(context.Background())
	tc.controller = newController(tc.ctx, home, db, log, host, 5*time.Second, func() secrets.Chain {
		return secrets.Chain{secrets.Env{Lookup: func(string) (string, bool) {
			if p := tc.pw.Load(); p != nil {
				return *p, true
			}
			return "", false
		}}}
	})
	for name, n := range panics {
		tc.sups[name] = newFake(n)
	}
	tc.controller.newSupervisor = func(cfg supervisor.Config) (supervisorRunner, error) {
		if !cfg.UntilDone || cfg.DB != db || cfg.OnEvent == nil {
			t.Errorf("supervisor config %+v", cfg)
		}
		return tc.sups[cfg.Repo.Name], nil
	}
	tc.controller.newBot = func(o mailbot.Options) (mailRunner, error) {
		if o.Password.IsZero() || o.Store == nil || o.Store.Redact == nil {
			t.Errorf("mailbot options %+v", o)
		}
		return tc.bot, nil
	}
	t.Cleanup(func() {
		tc.cancel()
		host.Wait()
	})
	return tc
}

// startedJob registers a repository with a started job.
func (tc *testController) startedJob(repo string) {
	tc.t.Helper()
	ctx := context.Background()
	if _, _, err := repos.Register(ctx, tc.db, repo, filepath.Join(tc.t.TempDir(), repo), time.Now()); err != nil {
		tc.t.Fatal(err)
	}
	if _, err := tc.db.ExecContext(ctx, "INSERT INTO jobs (repo, name, state, created_at, updated_at) VALUES (?, 'j1', 'started', ?, ?)",
		repo, state.Now(time.Now()), state.Now(time.Now())); err != nil {
		tc.t.Fatal(err)
	}
}

// phoneConfig writes phone.yaml with a poll interval that tells versions apart.
func (tc *testController) phoneConfig(poll time.Duration) {
	tc.t.Helper()
	cfg := mailbot.DefaultConfig()
	cfg.BotAddress, cfg.OwnerAddresses = "bot@corp.test", []string{"me@home.test"}
	cfg.IMAP = mailbot.Server{Host: "127.0.0.1", Port: 1143, TLS: mailbot.TLSNone}
	cfg.SMTP = mailbot.Server{Host: "127.0.0.1", Port: 1025, TLS: mailbot.TLSNone}
	cfg.PollInterval = mailbot.Duration(poll)
	if err := cfg.Save(mailbot.ConfigPath(tc.home)); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *testController) phone(on bool) {
	tc.t.Helper()
	if err := problems.NewStore(tc.db).SetPhoneEnabled(context.Background(), on); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *testController) unit(name string) (service.UnitState, bool) {
	for _, u := range tc.host.Units() {
		if u.Name == name {
			return u, true
		}
	}
	return service.UnitState{}, false
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPanickingSupervisorIsRestartedAlone(t *testing.T) {
	tc := newTestController(t, map[string]int32{"alpha": 2, "beta": 0})
	tc.startedJob("alpha")
	tc.startedJob("beta")
	pw := "s3cret-phone-password"
	tc.pw.Store(&pw)
	tc.phoneConfig(time.Minute)
	tc.phone(true)
	tc.watch = 10 * time.Millisecond
	go tc.run(tc.ctx)

	alpha, beta := tc.sups["alpha"], tc.sups["beta"]
	eventually(t, "alpha to run after its panics", func() bool { return alpha.live.Load() == 1 })
	eventually(t, "beta and the mailbot to run", func() bool { return beta.live.Load() == 1 && tc.bot.live.Load() == 1 })
	if a, _ := tc.unit("repo/alpha"); a.Restarts != 2 || !strings.Contains(a.LastErr, "the supervisor of this repository broke") {
		t.Errorf("alpha: %+v", a)
	}
	if n := alpha.runs.Load(); n != 3 {
		t.Errorf("alpha ran %d times, want 2 panics and 1 run", n)
	}
	for name, f := range map[string]*fakeRunner{"repo/beta": beta, "mailbot": tc.bot} {
		u, ok := tc.unit(name)
		if !ok || u.Restarts != 0 || f.runs.Load() != 1 {
			t.Errorf("%s was disturbed by alpha's panic: %+v, %d runs", name, u, f.runs.Load())
		}
	}
	log := tc.log.String()
	if strings.Count(log, `"msg":"unit failed; restarting","unit":"repo/alpha"`) != 2 || !strings.Contains(log, "panic in repo/alpha") {
		t.Errorf("the panics are not logged:\n%s", log)
	}
	if strings.Contains(log, pw) {
		t.Errorf("the password is in the log:\n%s", log)
	}

	// A problem event wakes the mailbot's sender at once.
	tc.onEvent(supervisor.Event{Kind: "problem"})
	tc.onEvent(supervisor.Event{Kind: "session"})
	if n := tc.bot.woken.Load(); n != 1 {
		t.Errorf("the mailbot was woken %d times, want 1 (by the problem only)", n)
	}
	// A stop's grace reaches the running supervisors.
	tc.setStopGrace(3 * time.Second)
	if time.Duration(alpha.grace.Load()) != 3*time.Second || time.Duration(beta.grace.Load()) != 3*time.Second {
		t.Errorf("stop grace not passed on: %v %v", alpha.grace.Load(), beta.grace.Load())
	}
}

func TestFinishedSupervisorEndsAndNewJobsStartOne(t *testing.T) {
	tc := newTestController(t, nil)
	done := newFake(0)
	tc.controller.newSupervisor = func(cfg supervisor.Config) (supervisorRunner, error) { return finishing{done}, nil }
	served := func() int { return strings.Count(tc.log.String(), `"msg":"serving repository"`) }
	tc.startedJob("alpha")
	tc.sync(tc.ctx)
	eventually(t, "the finished supervisor to leave", func() bool { _, ok := tc.unit("repo/alpha"); return !ok && done.runs.Load() == 1 })
	if _, err := tc.db.Exec("UPDATE jobs SET state = 'done'"); err != nil {
		t.Fatal(err)
	}
	tc.sync(tc.ctx)
	if served() != 1 {
		t.Fatalf("a supervisor was started for a repository without started jobs:\n%s", tc.log.String())
	}
	if _, err := tc.db.Exec("INSERT INTO jobs (repo, name, state, created_at, updated_at) VALUES ('alpha', 'j2', 'started', '', '')"); err != nil {
		t.Fatal(err)
	}
	tc.sync(tc.ctx)
	eventually(t, "a supervisor for the new job", func() bool { return done.runs.Load() == 2 })
	if served() != 2 || !strings.Contains(tc.log.String(), `"msg":"unit finished","unit":"repo/alpha"`) {
		t.Fatalf("log:\n%s", tc.log.String())
	}
}

// finishing is a supervisor whose jobs are all done: Run returns at once.
type finishing struct{ *fakeRunner }

func (f finishing) Run(context.Context) error { f.runs.Add(1); return nil }

func TestMailbotFollowsPhoneSettings(t *testing.T) {
	tc := newTestController(t, nil)
	bots := []*fakeRunner{}
	tc.controller.newBot = func(o mailbot.Options) (mailRunner, error) {
		b := newFake(0)
		b.runs, b.live = tc.bot.runs, tc.bot.live // one count across restarts; live catches overlap
		bots = append(bots, b)
		return b, nil
	}
	runs := func() int32 { return tc.bot.runs.Load() }
	reasons := func() int { return strings.Count(tc.log.String(), `"msg":"the mailbot does not run"`) }

	for range 3 {
		tc.sync(tc.ctx)
	}
	if runs() != 0 || reasons() != 1 || !strings.Contains(tc.log.String(), "the phone channel is not set up") {
		t.Fatalf("without phone.yaml: %d runs, %d reasons logged\n%s", runs(), reasons(), tc.log.String())
	}
	if tc.noMailbot() == "" {
		t.Error("no reason published")
	}
	tc.phoneConfig(time.Minute)
	tc.sync(tc.ctx)
	tc.sync(tc.ctx)
	if runs() != 0 || reasons() != 2 || !strings.Contains(tc.log.String(), "the phone channel is off") {
		t.Fatalf("channel off: %d runs, %d reasons\n%s", runs(), reasons(), tc.log.String())
	}
	tc.phone(true)
	tc.sync(tc.ctx)
	if runs() != 0 || reasons() != 3 || !strings.Contains(tc.log.String(), "no phone password") {
		t.Fatalf("no password: %d runs, %d reasons\n%s", runs(), reasons(), tc.log.String())
	}
	pw := "first-password"
	tc.pw.Store(&pw)
	tc.sync(tc.ctx)
	eventually(t, "the mailbot to run", func() bool { return tc.bot.live.Load() == 1 })
	if tc.noMailbot() != "" {
		t.Errorf("a reason is published while the mailbot runs: %s", tc.noMailbot())
	}

	// Rewriting phone.yaml as it was changes nothing.
	tc.phoneConfig(time.Minute)
	tc.sync(tc.ctx)
	if runs() != 1 {
		t.Fatalf("the mailbot restarted for an unchanged phone.yaml (%d runs)", runs())
	}
	// A changed phone.yaml restarts it, the old run ending first.
	tc.phoneConfig(2 * time.Minute)
	tc.sync(tc.ctx)
	eventually(t, "the mailbot to run again", func() bool { return runs() == 2 && tc.bot.live.Load() == 1 })
	// So does a new password.
	pw2 := "second-password"
	tc.pw.Store(&pw2)
	tc.sync(tc.ctx)
	eventually(t, "the mailbot to run with the new password", func() bool { return runs() == 3 && tc.bot.live.Load() == 1 })
	if !strings.Contains(tc.log.String(), "the phone settings or password changed; restarting the mailbot") {
		t.Errorf("restart not logged:\n%s", tc.log.String())
	}
	// Turning the channel off stops it.
	tc.phone(false)
	tc.sync(tc.ctx)
	eventually(t, "the mailbot to stop", func() bool { _, ok := tc.unit(mailbotUnit); return !ok && tc.bot.live.Load() == 0 })
	if runs() != 3 || len(bots) != 3 {
		t.Fatalf("%d runs of %d bots", runs(), len(bots))
	}
	for _, s := range []string{pw, pw2} {
		if strings.Contains(tc.log.String(), s) {
			t.Fatalf("a password is in the log:\n%s", tc.log.String())
		}
	}
	// A broken phone.yaml is a reason too, not a crash.
	if err := os.WriteFile(mailbot.ConfigPath(tc.home), []byte("bot_address: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tc.phone(true)
	tc.sync(tc.ctx)
	if runs() != 3 || !strings.Contains(tc.noMailbot(), "the phone settings cannot be used") {
		t.Fatalf("broken phone.yaml: %d runs, reason %q", runs(), tc.noMailbot())
	}
}
