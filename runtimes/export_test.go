package runtimes

import "time"

// SetAfter replaces the time-limit timer of a runtime made by New, so a test
// decides when the limit is reached.
func SetAfter(rt Runtime, after func(time.Duration) (<-chan time.Time, func() bool)) {
	rt.(*adapter).after = after
}

// SlotsWaiting returns how many sessions of rt wait for a max_sessions slot.
func SlotsWaiting(rt Runtime) int {
	s := rt.(*adapter).slots
	if s == nil {
		return 0
	}
	return int(s.waiting.Load())
}

// SameSlots reports whether two runtimes share one max_sessions limit.
func SameSlots(a, b Runtime) bool { return a.(*adapter).slots == b.(*adapter).slots }
