//go:build linux

package main_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var idleWindow = flag.Duration("service.idle", 10*time.Second, "how long BenchmarkServiceIdle watches the idle service")

// procStat reads a process's CPU time (user + system) and its resident
// memory now and at its peak, from /proc.
func procStat(b *testing.B, pid int) (cpu time.Duration, rss, hwm int64) {
	b.Helper()
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces): state is 3rd,
	// utime the 14th and stime the 15th field of the line.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const userHZ = 100 // /proc counts clock ticks of USER_HZ, 100 on Linux
	cpu = time.Duration(utime+stime) * time.Second / userHZ
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			rss = kb << 10
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			hwm = kb << 10
		}
	}
	return cpu, rss, hwm
}

// BenchmarkServiceIdle measures the built service's resident memory and CPU
// while it sits idle for -service.idle (default 10s; the figures in the
// docs use 1m) with IMAP IDLE open: the mailbot alone, and the mailbot with
// a repository whose job is stopped on a problem (its supervisor watching
// the store). Run it as:
//
//	go test ./cmd/agentkit -run '^$' -bench BenchmarkServiceIdle -benchtime 1x -service.idle 1m
func BenchmarkServiceIdle(b *testing.B) {
	for _, withJob := range []bool{false, true} {
		name := "mailbot"
		if withJob {
			name = "mailbot+stopped-job"
		}
		b.Run(name, func(b *testing.B) {
			w := newSvcWorld(b)
			w.phoneSetup()
			svc, _ := w.startBinary(w.repo, "service", "run")
			w.waitFor("IDLE", func() bool {
				mb := w.mailboxes()
				return len(mb) == 1 && mb[0].IdleInUse
			})
			if withJob {
				w.job("j1", "broken")
				w.fail("broken")
				w.mustRun(w.repo, "job", "start", "j1")
				w.waitMail(string(w.problemFor("broken").Code))
			}
			pid := svc.Process.Pid
			for b.Loop() {
				cpu0, _, _ := procStat(b, pid)
				start := time.Now()
				time.Sleep(*idleWindow) // the measurement window, not a wait for anything
				cpu1, rss, hwm := procStat(b, pid)
				b.ReportMetric(float64(rss)/(1<<20), "MB-rss")
				b.ReportMetric(float64(hwm)/(1<<20), "MB-peak-rss")
				b.ReportMetric(100*float64(cpu1-cpu0)/float64(time.Since(start)), "%cpu")
			}
			w.mustRun(w.repo, "service", "stop")
		})
	}
}

// BenchmarkFailureToEmail measures, through the built service, the time
// from a task's failure (the end of the gate run that stops it, after its
// automatic retry) to the problem email accepted by the SMTP server. Each
// iteration starts a job with one task whose gate fails. Run it as:
//
//	go test ./cmd/agentkit -run '^$' -bench BenchmarkFailureToEmail -benchtime 20x
func BenchmarkFailureToEmail(b *testing.B) {
	w := newSvcWorld(b)
	w.phoneSetup()
	w.startBinary(w.repo, "service", "run")
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		n++
		job, task := fmt.Sprintf("j%d", n), fmt.Sprintf("t%d", n)
		w.job(job, task)
		w.fail(task)
		sent := len(w.smtp.Messages())
		w.mustRun(w.repo, "job", "start", job)
		w.smtp.WaitMessages(b, sent+1, 2*time.Minute)
		accepted := time.Now()
		if w.gateRuns(task) != 2 {
			b.Fatalf("the gate ran %d times before the email", w.gateRuns(task))
		}
		runs, _ := os.ReadFile(filepath.Join(w.dir, "gate-"+task+".runs"))
		lines := strings.Fields(string(runs))
		ns, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		d := accepted.Sub(time.Unix(0, ns))
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms-failure-to-email")
	b.ReportMetric(float64(worst.Milliseconds()), "ms-worst")
	w.mustRun(w.repo, "service", "stop")
}
