package testkit

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// LeakWait is how long the leak checks give goroutines to end.
const LeakWait = 10 * time.Second

// VerifyNoLeaks, called first in a test that starts a daemon, checks
// when the test ends (after the cleanups registered later, such as
// Serve's stop) that every goroutine started since has ended, waiting up
// to LeakWait for them. opts are goleak's, to ignore more.
func VerifyNoLeaks(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	opts = append(opts, goleak.IgnoreCurrent())
	t.Cleanup(func() { CheckNoLeaks(t, LeakWait, opts...) })
}

// CheckNoLeaks waits up to within for the goroutines goleak finds
// (beyond those opts ignore, typically goleak.IgnoreCurrent() taken
// earlier) to end, and fails t with their stacks if some are still
// running.
func CheckNoLeaks(t testing.TB, within time.Duration, opts ...goleak.Option) {
	t.Helper()
	WaitFor(within, func() bool { return goleak.Find(opts...) == nil })
	goleak.VerifyNone(t, opts...)
}
