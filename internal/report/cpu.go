package report

import (
	"fmt"
	"io"
	"strings"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// hasCPU reports whether a result carries CPU figures of either side.
func hasCPU(s result.Summary) bool { return s.LocalCPU != nil || s.RemoteCPU != nil }

// cpuTable is netperf's TCP_STREAM table with its CPU columns (netperf
// -c -C): utilization in percent of all CPUs and service demand in
// microseconds of CPU per KB, local and remote. A run with two directions
// shows the CPU on its total row: CPU is measured per side, not per
// direction.
func cpuTable(w io.Writer, res result.Result, u units.RateUnit) {
	tw := newTable(w)
	fmt.Fprintln(tw, "Recv\tSend\tSend\t\t\tLocal\tRemote\tLocal\tRemote\t\t")
	fmt.Fprintln(tw, "Socket\tSocket\tMessage\tElapsed\t\tCPU\tCPU\tService\tService\t\t")
	fmt.Fprintln(tw, "Size\tSize\tSize\tTime\tThroughput\tUtil\tUtil\tDemand\tDemand\t\t")
	fmt.Fprintln(tw, "bytes\tbytes\tbytes\tsecs.\t"+u.Column()+"\t%\t%\tus/KB\tus/KB\t\t")
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
	one := len(res.Directions) == 1
	for _, d := range res.Directions {
		rcvBuf, sndBuf := 0, 0
		if len(d.Streams) > 0 {
			rcvBuf, sndBuf = d.Streams[0].Receiver.RcvBuf, d.Streams[0].Sender.SndBuf
		}
		cpu := "\t\t\t"
		if one {
			cpu = cpuCells(res.Summary)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.2f\t%s\t\t%s\n", rcvBuf, sndBuf, res.Spec.SendSize,
			d.Summary.ElapsedS, u.Scale(d.Summary.BitsPerSecond), cpu, dirLabel(d.Direction))
	}
	if !one {
		fmt.Fprintf(tw, "\t\t\t%.2f\t%.2f\t%s\t\t%s\n", res.Summary.ElapsedS, u.Scale(res.Summary.BitsPerSecond),
			cpuCells(res.Summary), "both directions")
	}
	tw.Flush()
}

// cpuCells is the four CPU cells of a table row, tab-separated: local and
// remote utilization, local and remote service demand; "-" for a side
// without figures.
func cpuCells(s result.Summary) string {
	util := func(c *measure.CPU) string {
		if c == nil || c.CPUs == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", c.UtilPct)
	}
	sd := func(c *measure.CPU) string {
		switch {
		case c == nil || c.CPUs == 0:
			return "-"
		case s.RRSummary != nil:
			return fmt.Sprintf("%.3f", c.ServiceDemandMicrosPerTransaction)
		}
		return fmt.Sprintf("%.3f", c.ServiceDemandMicrosPerKB)
	}
	return strings.Join([]string{util(s.LocalCPU), util(s.RemoteCPU), sd(s.LocalCPU), sd(s.RemoteCPU)}, "\t")
}

// cpuSplit is the second line of a sweep or matrix row: each side's
// system-wide CPU split into user, system, hardware interrupt and softirq
// time, in percent of all CPUs, as the run's CPU lines have it ("us sy
// hi si"); empty when neither side has system-wide figures.
func cpuSplit(s result.Summary) string {
	var parts []string
	for _, c := range []struct {
		name string
		cpu  *measure.CPU
	}{{"local", s.LocalCPU}, {"remote", s.RemoteCPU}} {
		if c.cpu == nil || c.cpu.CPUs == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f/%.1f/%.1f/%.1f", c.name, c.cpu.UserPct, c.cpu.SystemPct, c.cpu.IRQPct, c.cpu.SoftIRQPct))
	}
	if len(parts) == 0 {
		return ""
	}
	return "cpu us/sy/hi/si %: " + strings.Join(parts, ", ")
}

// CPU writes one top-like line per side with CPU figures: the share of
// all CPU time in each state over the side's window (us user, sy system,
// hi hardware interrupts, si softirq, id idle; ni nice, wa iowait and st
// steal when not zero), the busiest single CPU and the wirespeed
// process's own CPU time. Under them, a warning for each side where
// other processes used enough of the CPUs to spoil its figures
// (othersText).
func CPU(w io.Writer, s result.Summary) {
	cpuLines(w, s)
	textWarnings(w, othersWarnings(s, true, false, nil), true)
}

// cpuLines are CPU's top-like lines, without the warnings.
func cpuLines(w io.Writer, s result.Summary) {
	for _, c := range []struct {
		name string
		cpu  *measure.CPU
	}{{"local", s.LocalCPU}, {"remote", s.RemoteCPU}} {
		if c.cpu != nil {
			fmt.Fprintf(w, "%-6s %s\n", c.name, cpuLine(*c.cpu))
		}
	}
}

// othersWarnings are the warnings of the sides where other processes
// used enough of the CPUs to spoil the CPU figures (result.OthersFigures):
// in full when verbose, else short, the busiest process by name, or,
// when the host's figure shows processes that came and went
// (Others.CameAndWent), the host's busy share, how much was
// short-lived and the three busiest named.
//
// Not verbose, a side whose run the limit line already says other
// processes held back (limited) has none, and when both sides ran on one
// host (oneHost: loopback, or a lab's namespaces) the first one found
// says it for both, without a side: they measured the same processes.
func othersWarnings(s result.Summary, verbose, oneHost bool, limited func(result.Side) bool) []string {
	sides := []struct {
		side result.Side
		cpu  *measure.CPU
	}{{result.Local, s.LocalCPU}, {result.Remote, s.RemoteCPU}}
	var out []string
	for i, c := range sides {
		o := result.OthersFigures(c.side, c.cpu, sides[1-i].cpu)
		if verbose {
			if o != nil {
				out = append(out, othersText(*o))
			}
			continue
		}
		who := string(c.side) + " side: "
		if oneHost {
			who = ""
		}
		switch {
		case o == nil || limited(c.side) || (oneHost && (len(out) > 0 || limited(sides[1-i].side))):
		case o.BaselineOnly():
			out = append(out, fmt.Sprintf("%sthe host was %.0f%% busy before the test; CPU figures may include that load",
				who, o.Baseline.UtilPct))
		case o.CameAndWent():
			// Who took it, as a list a cut to Width shortens from its
			// end: the short-lived (in the total's unit), then the
			// busiest named.
			rest := fmt.Sprintf("%.0f%%", o.UtilPct-o.NamedPct)
			if o.UtilPct >= 99.5 {
				rest = fmt.Sprintf("%.1f", (o.UtilPct-o.NamedPct)/100)
			}
			m := fmt.Sprintf("%sother processes took %s, host %.0f%% busy (%s short-lived", who, cpuAmount(o.UtilPct), o.MeasuredPct, rest)
			if len(o.Named) > 0 {
				m += ", " + namedList(o.Named, 3)
			}
			out = append(out, m+")")
		default:
			m := fmt.Sprintf("%sCPU figures include other processes' %.0f%% of a CPU", who, o.UtilPct)
			if p := o.Busiest; p != nil {
				m += fmt.Sprintf(" (%s %.0f%%)", p.Name, p.UtilPct)
			}
			out = append(out, m)
		}
	}
	return out
}

// cpuAmount is CPU time in percent of one CPU as a person reads it: "25%
// of a CPU" under one CPU, "1.7 CPUs" from one up.
func cpuAmount(pct float64) string {
	if pct < 99.5 {
		return fmt.Sprintf("%.0f%% of a CPU", pct)
	}
	return fmt.Sprintf("%.1f CPUs", pct/100)
}

// namedList is "name pct%, ..." for the first n processes.
func namedList(ps []measure.TaskCPU, n int) string {
	var parts []string
	for _, p := range ps[:min(n, len(ps))] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", p.Name, p.UtilPct))
	}
	return strings.Join(parts, ", ")
}

// othersLimited reports whether res's limit line (or one of its
// directions') names other processes on a side.
func othersLimited(res result.Result) func(result.Side) bool {
	return func(side result.Side) bool {
		ls := []*result.Limit{res.Summary.Limit}
		for _, d := range res.Directions {
			ls = append(ls, d.Summary.Limit)
		}
		for _, l := range ls {
			if l != nil && l.Kind == result.LimitOtherProcesses && l.Evidence.Others != nil && l.Evidence.Others.Side == side {
				return true
			}
		}
		return false
	}
}

// oneHost reports whether both sides of res ran on one host: their
// environment records name the same host.
func oneHost(res result.Result) bool {
	l, r := res.Local.Env, res.Remote.Env
	return l != nil && r != nil && l.Hostname != "" && l.Hostname == r.Hostname && l.KernelRelease == r.KernelRelease
}

func cpuLine(c measure.CPU) string {
	if c.CPUs == 0 {
		return processOnlyLine(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cpu: %.1f%%us %.1f%%sy", c.UserPct, c.SystemPct)
	if c.NicePct >= 0.05 {
		fmt.Fprintf(&b, " %.1f%%ni", c.NicePct)
	}
	fmt.Fprintf(&b, " %.1f%%hi %.1f%%si", c.IRQPct, c.SoftIRQPct)
	if c.IOWaitPct >= 0.05 {
		fmt.Fprintf(&b, " %.1f%%wa", c.IOWaitPct)
	}
	if c.StealPct >= 0.05 {
		fmt.Fprintf(&b, " %.1f%%st", c.StealPct)
	}
	fmt.Fprintf(&b, " %.1f%%id", c.IdlePct)
	fmt.Fprintf(&b, "  (%d cpu%s", c.CPUs, plural(c.CPUs))
	if c.BusiestCPU >= 0 && c.CPUs > 1 {
		fmt.Fprintf(&b, ", busiest cpu%d %.1f%%", c.BusiestCPU, c.BusiestCPUPct)
	}
	if c.Baseline != nil {
		// The host's load with no test running (the idle baseline): "idle
		// baseline 100%" read as 100% idle.
		fmt.Fprintf(&b, ", busy before the test %.1f%%", c.Baseline.UtilPct)
	}
	fmt.Fprintf(&b, "; wirespeed %.2fs user %.2fs sys over %.2fs)", c.ProcessUserS, c.ProcessSystemS, c.ElapsedS)
	return b.String()
}

// processOnlyLine is the CPU line of a side that reported only its own
// process's CPU time, without system-wide figures (CPUs is 0): an iperf3
// peer.
func processOnlyLine(c measure.CPU) string {
	pct := 0.0
	if c.ElapsedS > 0 {
		pct = 100 * (c.ProcessUserS + c.ProcessSystemS) / c.ElapsedS
	}
	return fmt.Sprintf("cpu: process only, %.2fs user %.2fs sys over %.2fs (%.1f%% of one CPU; no system-wide figures)",
		c.ProcessUserS, c.ProcessSystemS, c.ElapsedS, pct)
}

// othersText is the warning of result.OthersFigures in full: the other
// processes' CPU three ways, the busiest and the idle baseline.
func othersText(o result.Others) string {
	if o.BaselineOnly() {
		b := o.Baseline
		return fmt.Sprintf("%s side: with no test running the host was %.1f%% busy (measured over %.2fs before the first run, %.0f%% of the %.1f%% measured): the CPU utilization and service demand may include that load",
			o.Side, b.UtilPct, b.WindowS, 100*b.UtilPct/o.MeasuredPct, o.MeasuredPct)
	}
	s := fmt.Sprintf("%s side: other processes used %.0f%% of a CPU during the window (%.1f%% of the %d CPUs, %.0f%% of the %.1f%% measured): the CPU utilization and service demand include them",
		o.Side, o.UtilPct, o.SharePct, o.CPUs, o.OfMeasuredPct, o.MeasuredPct)
	if o.CameAndWent() {
		s += fmt.Sprintf("; %.0f%% of a CPU in processes alive the whole window, the rest in processes that started or ended within it", o.NamedPct)
	}
	if p := o.Busiest; p != nil {
		s += fmt.Sprintf(" (busiest: %s, pid %d, %.0f%% of a CPU)", p.Name, p.ID, p.UtilPct)
	}
	if b := o.Baseline; b != nil {
		s += fmt.Sprintf("; with no test running the host was %.1f%% busy (over %.2fs before the first run)", b.UtilPct, b.WindowS)
	}
	return s
}
