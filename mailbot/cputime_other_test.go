//go:build !unix

package mailbot_test

import (
	"testing"
	"time"
)

// cpuTime is not measured where getrusage is missing.
func cpuTime(tb testing.TB) time.Duration {
	tb.Skip("CPU time is measured with getrusage, which this platform lacks")
	return 0
}
