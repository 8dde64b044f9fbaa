package client

import (
	"fmt"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/peertext"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// What the server sends during a test is checked against what the test
// allows before the client keeps or acts on any of it: a hostile or broken
// server must end the run with a clear error, never make the client loop,
// wait past its deadline or grow without bound.

// intervalSlack is how far ahead of the client's own clock the server's
// interval reports may run. An honest server's report k cannot arrive
// before omit + k*interval after the client sent start (the server starts
// its clock later); the slack only absorbs clock rate differences.
const intervalSlack = time.Second

// maxWarnings bounds the warnings of a server's result, which the report
// prints one a line: a server has a handful (what its environment record
// could not read), not thousands.
const maxWarnings = 256

// maxIntervals is the number of interval reports a flow of t makes:
// one per interval of the window, the last one possibly shorter.
func maxIntervals(t spec.Test) int {
	if t.Interval <= 0 {
		return 0
	}
	n := t.Duration / t.Interval
	if t.Duration%t.Interval != 0 {
		n++
	}
	return int(n)
}

// streamsIn is the number of streams t runs in direction d.
func streamsIn(t spec.Test, d spec.Direction) int {
	n := 0
	for _, st := range t.Streams() {
		if st.Dir == d {
			n++
		}
	}
	return n
}

// remoteRole is the role the server plays in direction d of t.
func remoteRole(t spec.Test, d spec.Direction) result.Role {
	switch {
	case t.Kind.RR():
		return result.Responder
	case d == spec.ClientToServer:
		return result.Receiver
	}
	return result.Sender
}

// intervalGuard checks the server's interval reports of one run: each
// direction's reports come in order, 0, 1, 2 ..., no more than the window
// has intervals and none ahead of the time it could have been measured.
// So what the client keeps of them is bounded by what the test's length
// and interval allow, and by the time elapsed.
type intervalGuard struct {
	t       spec.Test
	started time.Time
	max     int
	next    map[spec.Direction]int
	now     func() time.Time
}

func newIntervalGuard(t spec.Test, started time.Time) *intervalGuard {
	g := &intervalGuard{t: t, started: started, max: maxIntervals(t), next: map[spec.Direction]int{}, now: time.Now}
	for _, d := range t.Directions() {
		g.next[d] = 0
	}
	return g
}

// check returns an error wrapping control.ErrProtocol when r is not a
// report this run's server could send now.
func (g *intervalGuard) check(r result.IntervalReport) error {
	want, ok := g.next[r.Direction]
	switch {
	case g.max == 0:
		return fmt.Errorf("%w: an interval report in a test without intervals", control.ErrProtocol)
	case !ok:
		return fmt.Errorf("%w: an interval report for direction %q, which this %s test does not have", control.ErrProtocol, r.Direction, g.t.Kind)
	case r.Role != remoteRole(g.t, r.Direction):
		return fmt.Errorf("%w: an interval report of %s as %q, where the server is the %s", control.ErrProtocol, r.Direction, r.Role, remoteRole(g.t, r.Direction))
	case r.Index != want:
		return fmt.Errorf("%w: interval report %d of %s where %d was due (reports come in order, from 0)", control.ErrProtocol, r.Index, r.Direction, want)
	case r.Index >= g.max:
		return fmt.Errorf("%w: interval report %d of %s, but a window of %v in intervals of %v has %d", control.ErrProtocol, r.Index, r.Direction, g.t.Duration, g.t.Interval, g.max)
	case len(r.Streams) > streamsIn(g.t, r.Direction):
		return fmt.Errorf("%w: interval report %d of %s has %d streams, the test %d", control.ErrProtocol, r.Index, r.Direction, len(r.Streams), streamsIn(g.t, r.Direction))
	}
	if early := g.t.Omit + time.Duration(r.Index)*g.t.Interval - intervalSlack; g.now().Sub(g.started) < early {
		return fmt.Errorf("%w: interval report %d of %s arrived %v after the start, before its interval could have been measured (%v)",
			control.ErrProtocol, r.Index, r.Direction, g.now().Sub(g.started).Round(time.Millisecond), early+intervalSlack)
	}
	// The report's interval ends at most an interval after the time the
	// check above let it begin.
	if err := result.CheckReport(r, (g.now().Sub(g.started) + intervalSlack + g.t.Interval).Seconds()); err != nil {
		return fmt.Errorf("%w: the server's figures cannot be measured: %w", control.ErrProtocol, err)
	}
	g.next[r.Direction] = want + 1
	return nil
}

// checkResult returns an error wrapping control.ErrProtocol when the
// server's result holds more than the test allows: a flow per direction
// of the test, no more streams than it runs, no more intervals than its
// window has; or a figure no measurement of runS seconds (the run as
// this side's clock saw it, slack included) gives (result.CheckSide).
func checkResult(t spec.Test, r result.SideResult, runS float64) error {
	dirs := t.Directions()
	if len(r.Flows) > len(dirs) {
		return fmt.Errorf("%w: the server's result has %d flows, the %s test %d", control.ErrProtocol, len(r.Flows), t.Kind, len(dirs))
	}
	if len(r.Warnings) > maxWarnings {
		return fmt.Errorf("%w: the server's result has %d warnings, more than %d", control.ErrProtocol, len(r.Warnings), maxWarnings)
	}
	if r.Queue != nil && len(r.Queue.Samples) > result.MaxQueueSamples(t) {
		return fmt.Errorf("%w: the server's result has %d queue samples, the run %d at most", control.ErrProtocol, len(r.Queue.Samples), result.MaxQueueSamples(t))
	}
	if r.Probes != nil {
		return fmt.Errorf("%w: the server's result has probes; only the client probes", control.ErrProtocol)
	}
	if err := checkCPU(r.CPU); err != nil {
		return err
	}
	maxIv := maxIntervals(t)
	seen := map[spec.Direction]bool{}
	for _, f := range r.Flows {
		n := streamsIn(t, f.Direction)
		switch {
		case n == 0:
			return fmt.Errorf("%w: the server's result has a flow for direction %q, which this %s test does not have", control.ErrProtocol, f.Direction, t.Kind)
		case seen[f.Direction]:
			return fmt.Errorf("%w: the server's result has two flows for %s", control.ErrProtocol, f.Direction)
		case len(f.Streams) > n:
			return fmt.Errorf("%w: the server's result has %d streams for %s, the test %d", control.ErrProtocol, len(f.Streams), f.Direction, n)
		case len(f.Intervals) > maxIv:
			return fmt.Errorf("%w: the server's result has %d intervals for %s, the window %d", control.ErrProtocol, len(f.Intervals), f.Direction, maxIv)
		}
		seen[f.Direction] = true
		for _, s := range f.Streams {
			if len(s.Intervals) > maxIv {
				return fmt.Errorf("%w: the server's result has %d intervals for stream %d, the window %d", control.ErrProtocol, len(s.Intervals), s.ID, maxIv)
			}
			if s.CongestionControl != "" && !spec.ValidCCName(s.CongestionControl) {
				return fmt.Errorf("%w: the server's result names congestion control %q for stream %d, not a kernel algorithm name", control.ErrProtocol, s.CongestionControl, s.ID)
			}
		}
	}
	if err := result.CheckSide(r, runS); err != nil {
		return fmt.Errorf("%w: the server's figures cannot be measured: %w", control.ErrProtocol, err)
	}
	return nil
}

// checkAccepted returns an error wrapping control.ErrProtocol when the
// ports the server gave for t are not ports.
func checkAccepted(t spec.Test, acc control.Accepted) error {
	bad := func(what string, p int) error {
		return fmt.Errorf("%w: the server gave %s %d, not a port (1-65535)", control.ErrProtocol, what, p)
	}
	switch {
	case t.Kind.UDP():
		for _, p := range acc.UDPPorts {
			if p < 1 || p > 65535 {
				return bad("UDP port", p)
			}
		}
	case t.Kind == spec.TCPCRR:
		if acc.CRRPort < 1 || acc.CRRPort > 65535 {
			return bad("TCP_CRR port", acc.CRRPort)
		}
	case t.Kind == spec.RRUL:
		switch {
		case acc.DataPort < 1 || acc.DataPort > 65535:
			return bad("data port", acc.DataPort)
		case acc.CRRPort < 1 || acc.CRRPort > 65535:
			return bad("TCP probe port", acc.CRRPort)
		case len(acc.UDPPorts) != 1:
			return fmt.Errorf("%w: the server gave %d UDP ports for RRUL's one UDP probe socket", control.ErrProtocol, len(acc.UDPPorts))
		case acc.UDPPorts[0] < 1 || acc.UDPPorts[0] > 65535:
			return bad("UDP probe port", acc.UDPPorts[0])
		}
	default:
		if acc.DataPort < 1 || acc.DataPort > 65535 {
			return bad("data port", acc.DataPort)
		}
	}
	return nil
}

// escapedErr is an error whose text may quote the server: Error escapes
// its control characters, Unwrap keeps errors.Is and errors.As working.
type escapedErr struct{ err error }

func (e escapedErr) Error() string { return peertext.Escape(e.err.Error()) }
func (e escapedErr) Unwrap() error { return e.err }

// maxCPUs bounds the per-CPU lists of a server's CPU record: Linux's
// NR_CPUS is at most 8192.
const maxCPUs = 8192

// checkCPU bounds the lists of the server's CPU record, which the limit
// diagnosis walks and the report names: a wirespeed server lists at most
// measure.MaxTasks threads and processes and one entry per CPU.
func checkCPU(c *measure.CPU) error {
	if c == nil {
		return nil
	}
	for _, l := range []struct {
		what string
		n    int
		max  int
	}{
		{"threads", len(c.Threads), measure.MaxTasks},
		{"other processes", len(c.OtherProcesses), measure.MaxTasks},
		{"thread CPU splits", len(c.ThreadCPUShares), measure.MaxTasks},
		{"per-CPU figures", len(c.PerCPUUtilPct), maxCPUs},
		{"per-CPU numbers", len(c.PerCPUIDs), maxCPUs},
	} {
		if l.n > l.max {
			return fmt.Errorf("%w: the server's CPU record lists %d %s, more than %d", control.ErrProtocol, l.n, l.what, l.max)
		}
	}
	return nil
}
