package supervisor_test

import (
	"testing"
	"time"

	"github.com/agentkit/agentkit/supervisor"
)

func TestFakeClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := supervisor.NewFakeClock(start)
	late := c.After(time.Hour)
	early := c.After(time.Minute)
	now := c.After(0)
	select {
	case <-now:
	default:
		t.Fatal("After(0) did not fire at once")
	}
	if c.Waiters() != 2 {
		t.Fatalf("%d waiters", c.Waiters())
	}
	c.Advance(2 * time.Minute)
	select {
	case at := <-early:
		if !at.Equal(start.Add(2 * time.Minute)) {
			t.Errorf("fired at %s", at)
		}
	default:
		t.Fatal("the one-minute wait did not fire")
	}
	select {
	case <-late:
		t.Fatal("the hour wait fired early")
	default:
	}
	c.Advance(time.Hour)
	<-late
	if !c.Now().Equal(start.Add(62*time.Minute)) || c.Waiters() != 0 {
		t.Errorf("now %s, %d waiters", c.Now(), c.Waiters())
	}
}
