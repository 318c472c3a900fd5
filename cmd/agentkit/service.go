package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentkit/agentkit/internal/atomicfile"
	"github.com/agentkit/agentkit/internal/service"
	"github.com/agentkit/agentkit/secrets"
)

func newCmdService(ios *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run, start, stop or install the one background service of this user",
		Long: `The service hosts the supervisor of every repository with a started job, and
the mailbot. One runs per user; its pid, lock and log live in $AGENTKIT_HOME.`,
	}
	cmd.AddCommand(newCmdServiceRun(ios), newCmdServiceStart(ios), newCmdServiceStop(ios), newCmdServiceStatus(ios), newCmdServiceInstall(ios))
	return cmd
}

func newCmdServiceRun(ios *ioStreams) *cobra.Command {
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the service in the foreground (for systemd, launchd, and debugging)",
		Long: `Runs the service in this terminal until Ctrl-C or SIGTERM. It serves every
registered repository with a started job (one supervisor each) and, when the
phone channel is set up and on, the mailbot. Its log is $AGENTKIT_HOME/service.log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serviceRun(ctx, ios, grace)
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", defaultStopGrace, "on stop, how long running sessions get to finish their step before they are stopped (agentkit service stop --grace overrides it)")
	return cmd
}

// defaultStopGrace is how long running sessions get to finish on a stop.
const defaultStopGrace = 30 * time.Second

// stopMargin is how long the service waits past the grace for sessions to
// end after they were told to stop (SIGTERM, then SIGKILL after the
// runtime's own grace).
const stopMargin = time.Minute

// serviceState is what the running service publishes for service status.
type serviceState struct {
	PID     int                 `json:"pid"`
	Started time.Time           `json:"started"`
	Updated time.Time           `json:"updated"`
	Units   []service.UnitState `json:"units"`
	// NoMailbot says why the mailbot does not run ("" when it runs).
	NoMailbot string `json:"no_mailbot,omitempty"`
}

func serviceRun(ctx context.Context, ios *ioStreams, grace time.Duration) error {
	if err := service.MakeNonDumpable(); err != nil {
		return err
	}
	home, err := ios.home()
	if err != nil {
		return err
	}
	files := service.Files{Home: home}
	started := ios.now()
	lock, err := files.Acquire(started)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	defer os.Remove(files.PID())
	files.TakeStopRequest() // one left by a stop that found the service gone
	logFile, err := service.OpenLog(files.Log(), 10<<20, 3)
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(logFile, ios.Err), nil))
	db, err := ios.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("service started", "pid", os.Getpid(), "home", home, "grace", grace.String())

	host := &service.Host{Log: log}
	unitCtx, cancelUnits := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelUnits()
	c := newController(unitCtx, home, db, log, host, grace, func() secrets.Chain { return passwordChain(ios, defaultPhoneDeps(), home) })
	var pubMu sync.Mutex
	publish := func() {
		pubMu.Lock()
		defer pubMu.Unlock()
		units := host.Units()
		sort.Slice(units, func(i, j int) bool { return units[i].Name < units[j].Name })
		data, _ := json.Marshal(serviceState{PID: os.Getpid(), Started: started, Updated: ios.now(), Units: units, NoMailbot: c.noMailbot()})
		if err := atomicfile.Write(files.State(), data, 0o600); err != nil {
			log.Warn("writing the service state", "err", err)
		}
	}
	c.onChange = publish
	ctlCtx, stopController := context.WithCancel(unitCtx)
	defer stopController()
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- c.run(ctlCtx) }()
	publish()
	var failed error
	select {
	case <-ctx.Done():
	case err := <-ctlDone:
		ctlDone <- err
		failed = err
		log.Error("the service cannot watch the state store; stopping", "err", err)
	}

	// Nothing new starts once the stop began; then every unit is asked to end.
	stopController()
	<-ctlDone
	if g, ok := files.TakeStopRequest(); ok {
		grace = g
	}
	log.Info("service stopping", "grace", grace.String())
	c.setStopGrace(grace)
	for _, u := range host.Units() {
		host.Stop(u.Name)
	}
	done := make(chan struct{})
	go func() { host.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace + stopMargin):
		log.Warn("units still running after the grace; the service ends without them", "units", fmt.Sprint(host.Units()))
	}
	os.Remove(files.State())
	log.Info("service stopped")
	return failed
}

func newCmdServiceStart(ios *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "start",
		Short: "Start the service in the background (does nothing when it runs already)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, already, err := ensureService(ios)
			if err != nil {
				return err
			}
			if already {
				fmt.Fprintf(ios.Out, "The service is already running (pid %d).\n", pid)
				return nil
			}
			home, _ := ios.home()
			fmt.Fprintf(ios.Out, "Started the service (pid %d); its log is %s.\n", pid, service.Files{Home: home}.Log())
			return nil
		},
	}
}

// ensureService starts the background service unless one runs, and waits
// until it holds its lock.
func ensureService(ios *ioStreams) (pid int, already bool, err error) {
	home, err := ios.home()
	if err != nil {
		return 0, false, err
	}
	files := service.Files{Home: home}
	if up, info := files.Running(); up {
		return info.PID, true, nil
	}
	self, err := os.Executable()
	if err != nil {
		return 0, false, fmt.Errorf("finding the agentkit binary: %w", err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return 0, false, err
	}
	cmd := exec.Command(self, "service", "run")
	cmd.Env = append(os.Environ(), "AGENTKIT_HOME="+home)
	cmd.Dir = home
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return 0, false, fmt.Errorf("starting the service: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(15 * time.Second)
	for {
		if up, info := files.Running(); up && info.PID == cmd.Process.Pid {
			return info.PID, false, nil
		}
		select {
		case err := <-exited:
			if up, info := files.Running(); up {
				// Another start won the race; that one serves.
				return info.PID, true, nil
			}
			return 0, false, fmt.Errorf("the service exited at once (%v); see %s", err, files.Log())
		case <-deadline:
			return 0, false, fmt.Errorf("the service did not come up within 15s; see %s", files.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func newCmdServiceStop(ios *ioStreams) *cobra.Command {
	var wait, grace time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the service: running sessions get the grace to finish their step, then are stopped",
		Long: `Stops the service. Nothing new starts; running sessions get the grace to finish
the step they are in (the --grace of service run, 30s by default, unless
given here), then are stopped; they continue when the service starts again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := ios.home()
			if err != nil {
				return err
			}
			files := service.Files{Home: home}
			up, info := files.Running()
			if !up {
				fmt.Fprintln(ios.Out, "The service is not running.")
				return nil
			}
			if cmd.Flags().Changed("grace") {
				if grace < 0 {
					return usageError{msg: "--grace must not be negative"}
				}
				if err := files.RequestStop(grace, ios.now()); err != nil {
					return fmt.Errorf("asking the service for a grace of %s: %w", grace, err)
				}
				wait = max(wait, grace+stopMargin)
			}
			if err := signalStop(info.PID); err != nil {
				return fmt.Errorf("stopping the service (pid %d): %w", info.PID, err)
			}
			deadline := time.Now().Add(wait)
			for time.Now().Before(deadline) {
				if up, _ := files.Running(); !up {
					fmt.Fprintf(ios.Out, "Stopped the service (pid %d).\n", info.PID)
					return nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			return fmt.Errorf("the service (pid %d) is still stopping after %s; its sessions may still be finishing (see %s)", info.PID, wait, files.Log())
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", defaultStopGrace, "how long running sessions get to finish their step before they are stopped (default: the service's own --grace)")
	cmd.Flags().DurationVar(&wait, "wait", 2*time.Minute, "how long to wait for the service to end")
	return cmd
}

func newCmdServiceInstall(ios *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Write a systemd user unit (Linux) or launchd agent (macOS), or explain the Windows logon task",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := ios.home()
			if err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the agentkit binary: %w", err)
			}
			userHome, err := os.UserHomeDir()
			if err != nil {
				return err
			}
			switch runtime.GOOS {
			case "linux":
				path := filepath.Join(userHome, ".config", "systemd", "user", "agentkit.service")
				if err := writeUnit(path, service.SystemdUnit(self, home)); err != nil {
					return err
				}
				fmt.Fprintf(ios.Out, "Wrote %s.\nEnable and start it with:\n  systemctl --user daemon-reload\n  systemctl --user enable --now agentkit.service\nTo keep it running while you are logged out: loginctl enable-linger $USER\nThe phone password is read from %s (mode 0600) when it exists.\n", path, filepath.Join(home, "phone.env"))
			case "darwin":
				path := filepath.Join(userHome, "Library", "LaunchAgents", "dev.agentkit.service.plist")
				if err := writeUnit(path, service.LaunchdPlist(self, home)); err != nil {
					return err
				}
				fmt.Fprintf(ios.Out, "Wrote %s.\nLoad it with:\n  launchctl bootstrap gui/$(id -u) %s\n", path, path)
			case "windows":
				fmt.Fprint(ios.Out, service.WindowsInstructions(self))
			default:
				return fmt.Errorf("no service manager support for %s; run agentkit service run from your own init system", runtime.GOOS)
			}
			return nil
		},
	}
}

func writeUnit(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return atomicfile.Write(path, []byte(content), 0o644)
}
