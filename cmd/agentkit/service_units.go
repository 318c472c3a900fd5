package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/agentkit/agentkit/internal/repos"
	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/internal/state"
	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/secrets"
	"github.com/agentkit/agentkit/supervisor"
)

// mailbotUnit names the phone channel's unit; a repository's supervisor is
// repoUnitPrefix + its name.
const (
	mailbotUnit    = "mailbot"
	repoUnitPrefix = "repo/"
)

// supervisorRunner is what the service needs of a repository's supervisor.
type supervisorRunner interface {
	Run(ctx context.Context) error
	SetStopGrace(time.Duration)
}

// mailRunner is what the service needs of the mailbot.
type mailRunner interface {
	Run(ctx context.Context) error
	Wake()
}

// controller keeps the service's units in line with the store and phone.yaml:
// a supervisor for every repository with a started job, and the mailbot while
// the phone channel is set up, has its password and is on.
type controller struct {
	// units is the context the units run under. It outlives run's own, so
	// that the service stops the controller first and then gives the units
	// their grace.
	units context.Context
	home  string
	db    *state.DB
	log   *slog.Logger
	host  *service.Host
	grace time.Duration // the stop grace given to supervisors; guarded by mu
	// chain finds the phone password.
	chain func() secrets.Chain
	// newSupervisor and newBot build the units' workers; tests replace them.
	newSupervisor func(supervisor.Config) (supervisorRunner, error)
	newBot        func(mailbot.Options) (mailRunner, error)
	// watch is how often the store's data_version and the phone files are
	// checked; rescan is how often everything is checked regardless.
	watch, rescan time.Duration
	// onChange is called when a unit started, ended or restarted, or the
	// reason the mailbot does not run changed.
	onChange func()

	mu   sync.Mutex
	bot  mailRunner                  // the running bot, woken by problem events
	sups map[string]supervisorRunner // running supervisors by unit name
	// whyNoBot says why the mailbot does not run, for service status.
	whyNoBot string

	// ph is what the mailbot unit runs with; only sync touches it.
	ph phoneUnitState
}

// newController returns a controller with the real supervisor and mailbot.
func newController(units context.Context, home string, db *state.DB, log *slog.Logger, host *service.Host, grace time.Duration, chain func() secrets.Chain) *controller {
	return &controller{
		units: units, home: home, db: db, log: log, host: host, grace: grace, chain: chain,
		newSupervisor: func(cfg supervisor.Config) (supervisorRunner, error) { return supervisor.New(cfg) },
		newBot:        func(o mailbot.Options) (mailRunner, error) { return mailbot.New(o) },
		watch:         time.Second,
		rescan:        5 * time.Second,
		sups:          map[string]supervisorRunner{},
	}
}

// run syncs the units until ctx ends: at once, whenever another connection
// commits to the store or a phone file changes, and every rescan interval.
func (c *controller) run(ctx context.Context) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening a connection to watch the state store: %w", err)
	}
	defer conn.Close()
	tick := time.NewTicker(c.watch)
	defer tick.Stop()
	lastVersion := int64(-1)
	var lastFiles, published string
	var lastScan time.Time
	for {
		v, err := c.db.DataVersion(ctx, conn)
		if err != nil && ctx.Err() == nil {
			c.log.Error("watching the state store", "err", err)
		}
		files := c.phoneFilesStamp()
		if v != lastVersion || files != lastFiles || time.Since(lastScan) >= c.rescan {
			lastVersion, lastFiles, lastScan = v, files, time.Now()
			c.sync(ctx)
		}
		// Units also end by themselves (a supervisor whose jobs are done).
		if now := c.shape(); now != published {
			published = now
			if c.onChange != nil {
				c.onChange()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sync starts a supervisor for every repository with a started job that
// has none, and starts, restarts or stops the mailbot. A supervisor whose
// jobs are finished ends by itself.
func (c *controller) sync(ctx context.Context) {
	list, err := startedRepos(ctx, c.db)
	if err != nil {
		c.log.Error("reading the repositories with started jobs", "err", err)
	}
	for _, r := range list {
		if c.host.Start(c.units, c.supervisorUnit(r)) {
			c.log.Info("serving repository", "repo", r.Name, "path", r.Path)
		}
	}
	c.syncPhone(ctx)
}

// shape sums up what service status shows of the units: their names and
// restarts, and why the mailbot does not run.
func (c *controller) shape() string {
	var names []string
	for _, u := range c.host.Units() {
		names = append(names, fmt.Sprintf("%s:%d", u.Name, u.Restarts))
	}
	sort.Strings(names)
	return fmt.Sprint(names) + c.noMailbot()
}

// startedRepos lists the registered repositories that have a started job.
func startedRepos(ctx context.Context, db *state.DB) ([]repos.Repo, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, path FROM repos r
		WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.repo = r.name AND j.state = 'started') ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []repos.Repo
	for rows.Next() {
		var r repos.Repo
		if err := rows.Scan(&r.Name, &r.Path); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// supervisorUnit runs a repository's supervisor until its started jobs are
// done or cancelled. A panic or an error is logged by the host, which starts
// it again; the store keeps what it did.
func (c *controller) supervisorUnit(r repos.Repo) service.Unit {
	name := repoUnitPrefix + r.Name
	log := c.log.With("unit", name)
	return service.Unit{Name: name, Run: func(ctx context.Context) error {
		secretValues := c.secretValues()
		// Made and registered under the lock, so a stop's grace set
		// meanwhile is not missed.
		c.mu.Lock()
		sup, err := c.newSupervisor(supervisor.Config{
			DB: c.db, Repo: r, UntilDone: true, Logger: log, StopGrace: c.grace,
			Secrets: secretValues, OnEvent: c.onEvent,
		})
		if err == nil {
			c.sups[name] = sup
		}
		c.mu.Unlock()
		if err != nil {
			return err
		}
		defer func() {
			c.mu.Lock()
			delete(c.sups, name)
			c.mu.Unlock()
		}()
		return sup.Run(ctx)
	}}
}

// secretValues are the values supervisors keep out of logs and problems
// besides the secret-looking environment: the phone password.
func (c *controller) secretValues() []string {
	pw, _, err := c.chain().Find(secrets.Phone)
	if err != nil || pw.IsZero() {
		return nil
	}
	return []string{pw.Reveal()}
}

// onEvent wakes the mailbot's sender when a supervisor owes the owner an
// email (a problem, a decision's confirmation, a job's end), so it goes out
// at once. It runs under the supervisor's lock, so it never blocks.
func (c *controller) onEvent(e supervisor.Event) {
	switch e.Kind {
	case "problem", "decision", "job":
	default:
		return
	}
	c.mu.Lock()
	b := c.bot
	c.mu.Unlock()
	if b != nil {
		b.Wake()
	}
}

// setStopGrace gives every running supervisor the grace of the stop to come.
func (c *controller) setStopGrace(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.grace = d
	for _, s := range c.sups {
		s.SetStopGrace(d)
	}
}

// phoneFilesStamp changes whenever phone.yaml or phone.env changes.
func (c *controller) phoneFilesStamp() string {
	stamp := ""
	for _, p := range []string{mailbot.ConfigPath(c.home), secrets.EnvFilePath(c.home)} {
		if fi, err := os.Stat(p); err == nil {
			stamp += fmt.Sprintf("%d.%d;", fi.ModTime().UnixNano(), fi.Size())
		} else {
			stamp += "-;"
		}
	}
	return stamp
}
