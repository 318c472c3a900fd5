package mailbot_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/agentkit/agentkit/mailbot"
	"github.com/agentkit/agentkit/problems"
)

// percentile returns the p-th percentile (0-100) of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAppendToDecision measures, per reply, the time from its arrival
// in the mailbox to its decision committed in the store, with IDLE on
// loopback; a bare imapclient idling on the same mailbox measures the
// server's own push, and "added" is what the bot takes beyond it.
func BenchmarkAppendToDecision(b *testing.B) {
	h := newHarness(b, harnessOptions{phoneOff: true})
	stored := make(chan time.Time, 1)
	h.hook = func(uint32) { stored <- time.Now() }
	pushed := make(chan time.Time, 16)
	bare, _ := h.imap.client(b, h.pki, &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				pushed <- time.Now()
			}
		},
	}})
	idle, err := bare.Idle()
	if err != nil {
		b.Fatal(err)
	}
	defer idle.Close()
	h.start()
	waitIdle := func() {
		select {
		case <-h.imap.idleCh:
		case <-time.After(20 * time.Second):
			b.Fatal("the bot did not start IDLE")
		}
	}
	// The bot's IDLE and the bare client's are both running now.
	for h.imap.idleCount() < 2 {
		waitIdle()
	}
	var total, push, added []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		code := h.newProblem(fmt.Sprintf("problem %d", i))
		raw := h.reply(b, replyOpts{subject: "Re: [agentkit] " + string(code) + " demo: problem", body: "retry"})
		for len(h.imap.idleCh) > 0 {
			<-h.imap.idleCh
		}
		b.StartTimer()
		t0 := time.Now()
		h.imap.appendRaw(b, raw)
		tp := <-pushed
		ts := <-stored
		b.StopTimer()
		total, push, added = append(total, ts.Sub(t0)), append(push, tp.Sub(t0)), append(added, ts.Sub(tp))
		waitIdle() // the bot is idling again before the next reply
		b.StartTimer()
	}
	b.StopTimer()
	if n := h.count("SELECT count(*) FROM decisions"); n != b.N {
		b.Fatalf("%d decisions for %d replies", n, b.N)
	}
	for _, s := range [][]time.Duration{total, push, added} {
		slices.Sort(s)
	}
	b.ReportMetric(ms(percentile(total, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(total, 90)), "p90-ms")
	b.ReportMetric(ms(percentile(push, 50)), "push-p50-ms")
	b.ReportMetric(ms(percentile(added, 50)), "added-p50-ms")
	b.ReportMetric(ms(percentile(added, 90)), "added-p90-ms")
}

// BenchmarkBacklog10k measures a bot starting on a mailbox holding 10,000
// signed replies, each answering its own open problem, until every one is
// decided, stored and marked.
func BenchmarkBacklog10k(b *testing.B) {
	n := benchBacklogSize()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newHarness(b, harnessOptions{phoneOff: true})
		codes := make([]problems.Code, 0, n)
		err := h.db.Tx(context.Background(), func(tx *sql.Tx) error {
			for j := range n {
				c, err := h.store.CreateTx(context.Background(), tx, problems.New{Repo: "demo", Kind: problems.GateFailed, Summary: fmt.Sprintf("problem %d", j)})
				if err != nil {
					return err
				}
				codes = append(codes, c)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range codes {
			h.imap.appendRaw(b, h.reply(b, replyOpts{subject: "Re: [agentkit] " + string(c) + " demo: problem", body: "retry\n\nOn Monday agentkit wrote:\n> Reply with one of:\n"}))
		}
		b.StartTimer()
		start := time.Now()
		h.start()
		for {
			var last int
			if err := h.db.QueryRow("SELECT coalesce(max(last_uid), 0) FROM mailboxes").Scan(&last); err != nil {
				b.Fatal(err)
			}
			if last == n {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatal("the backlog was not processed in 5 minutes")
			}
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		h.stop()
		if got := h.count("SELECT count(*) FROM decisions"); got != n {
			b.Fatalf("%d decisions for %d replies", got, n)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
		b.ReportMetric(elapsed.Seconds()*10000/float64(n), "s/10k")
	}
}

// BenchmarkDeliver100 measures 100 problems created at once until the
// loopback SMTP server has accepted all 100 emails.
func BenchmarkDeliver100(b *testing.B) {
	h := newHarness(b, harnessOptions{})
	h.start()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := h.mailCount()
		err := h.db.Tx(context.Background(), func(tx *sql.Tx) error {
			for j := range 100 {
				if _, err := h.store.CreateTx(context.Background(), tx, problems.New{Repo: "demo", Kind: problems.GateFailed,
					Summary: fmt.Sprintf("problem %d/%d", i, j), LogTail: "--- FAIL: TestX\nFAIL\n"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for h.mailCount() < before+100 {
			time.Sleep(time.Millisecond)
		}
	}
	b.StopTimer()
	if got := h.mailCount(); got != 100*b.N {
		b.Fatalf("%d emails for %d problems", got, 100*b.N)
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "emails/s")
}

// BenchmarkIdleCPU measures the process's CPU time while the bot idles with
// IDLE open (and the store watched), against the same process idling with
// the servers alone. Each op is one second of idling.
func BenchmarkIdleCPU(b *testing.B) {
	h := newHarness(b, harnessOptions{})
	h.imap.repoll = 0
	h.storeWatch = mailbot.DefaultStoreWatch
	idleFor := func() time.Duration {
		c0 := cpuTime(b)
		time.Sleep(time.Second)
		return cpuTime(b) - c0
	}
	var base time.Duration
	for range b.N {
		base += idleFor()
	}
	h.start()
	select {
	case <-h.imap.idleCh:
	case <-time.After(20 * time.Second):
		b.Fatal("the bot did not start IDLE")
	}
	time.Sleep(100 * time.Millisecond) // let the start-up settle
	b.ResetTimer()
	var with time.Duration
	for range b.N {
		with += idleFor()
	}
	b.StopTimer()
	b.ReportMetric(ms(with)/float64(b.N), "cpu-ms/s")
	b.ReportMetric(ms(base)/float64(b.N), "baseline-cpu-ms/s")
}

// benchBacklogSize is 10,000, or less through AGENTKIT_BENCH_BACKLOG when profiling.
func benchBacklogSize() int {
	if v, err := strconv.Atoi(os.Getenv("AGENTKIT_BENCH_BACKLOG")); err == nil && v > 0 {
		return v
	}
	return 10000
}
