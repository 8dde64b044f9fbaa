package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// UnderLoadAnswer writes an RRUL result's answer: the idle and loaded
// round trips, what the load added, the load's throughput and the
// responsiveness on one line, then where the queue is. Text writes what
// limited the run under it, before the detail.
func UnderLoadAnswer(w io.Writer, res result.Result) {
	u := res.Summary.UnderLoad
	if u == nil {
		return
	}
	// The answer's clauses continue on the next line where one line is
	// too narrow for them (Width).
	clauses := func(line string) {
		for _, l := range FitClauses(line) {
			fmt.Fprintln(w, l)
		}
	}
	clauses(UnderLoadLine(u))
	if q := u.Queue; q != nil {
		clauses(QueueLine(u))
		if l := HostQueueLine(u); l != "" {
			for _, l := range wrapNote(l, 2) {
				fmt.Fprintln(w, l)
			}
		}
	}
}

// UnderLoadDetail writes the detail of an RRUL result under its answer:
// the round trips per kind of probe and phase, and the flows' rates.
func UnderLoadDetail(w io.Writer, res result.Result) {
	u := res.Summary.UnderLoad
	if u == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round trip (ms)\tphase\tp50\tp90\tp99\tmean\tsamples\tlost\t")
	row := func(kind, phase string, l result.Latency) {
		if l.Samples == 0 && l.Lost == 0 {
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", kind, phase, ms(l.P50Ms), ms(l.P90Ms), ms(l.P99Ms), ms(l.MeanMs), l.Samples, l.Lost)
	}
	for _, k := range []struct {
		name string
		of   func(result.Phase) result.Latency
	}{
		{"UDP probes", func(p result.Phase) result.Latency { return p.UDP }},
		{"TCP probes", func(p result.Phase) result.Latency { return p.TCP }},
		{"TCP connect", func(p result.Phase) result.Latency { return p.TCPConnect }},
		{"all", func(p result.Phase) result.Latency { return p.All }},
	} {
		row(k.name, fmt.Sprintf("idle %.0fs", u.IdleS), k.of(u.Idle))
		row(k.name, fmt.Sprintf("loaded %.0fs", u.LoadedS), k.of(u.Loaded))
	}
	tw.Flush()
	if len(u.Flows) > 0 {
		var parts []string
		for _, f := range u.Flows {
			dir := "up"
			if f.Direction != "client_to_server" {
				dir = "down"
			}
			parts = append(parts, fmt.Sprintf("%d %s %s %s", f.ID, dir, f.Mark, rate(f.BitsPerSecond)))
		}
		for _, l := range fitList("flows: ", parts, ", ", len("flows: ")) {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w)
}

// UnderLoadLine is the answer of an RRUL result in one line, as
// `idle 0.1 ms, loaded 61 ms (+61 ms, p99 82 ms); 18.6 down, 19.1 up
// Mbit/s; responsiveness 980 RPM`.
func UnderLoadLine(u *result.UnderLoad) string {
	var b strings.Builder
	fmt.Fprintf(&b, "idle %s ms", ms(u.Idle.All.P50Ms))
	if u.Loaded.All.Samples > 0 {
		sign := "+"
		if u.IncreaseMs < 0 && ms(-u.IncreaseMs) != "0.0" {
			sign = "-"
		}
		fmt.Fprintf(&b, ", loaded %s ms (%s%s ms, p99 %s ms)", ms(u.Loaded.All.P50Ms), sign, ms(abs(u.IncreaseMs)), ms(u.Loaded.All.P99Ms))
	} else {
		b.WriteString(", no loaded phase")
	}
	scale, unit := 1e6, "Mbit/s"
	if max(u.UpBitsPerSecond, u.DownBitsPerSecond) >= 10e9 {
		scale, unit = 1e9, "Gbit/s"
	}
	var rates []string
	if u.Load != "up" {
		rates = append(rates, fmt.Sprintf("%.1f down", u.DownBitsPerSecond/scale))
	}
	if u.Load != "down" {
		rates = append(rates, fmt.Sprintf("%.1f up", u.UpBitsPerSecond/scale))
	}
	fmt.Fprintf(&b, "; %s %s", strings.Join(rates, ", "), unit)
	if u.ResponsivenessRPM > 0 {
		fmt.Fprintf(&b, "; responsiveness %.0f RPM", u.ResponsivenessRPM)
	}
	return b.String()
}

// ms formats milliseconds: one decimal under 10, none above.
func ms(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// rate formats a flow's rate in Mbit/s.
func rate(bps float64) string { return fmt.Sprintf("%.1f Mbit/s", bps/1e6) }

// QueueLine says where an RRUL run's delay built, in parts that add
// up: each sampled place's delay, which a probe crosses once, against
// the increase (`the queue: tbf on wsul-va (client side), about 96 ms
// (234 KBytes at 20.0 Mbits/sec), 96 of the 100 ms increase`), the rest
// named as elsewhere on the path where they explain under 70% of it;
// then, apart and never added to it, the flows' own unsent data in
// their sockets, which the probes do not cross.
func QueueLine(u *result.UnderLoad) string {
	q := u.Queue
	var named []string
	for _, s := range q.Sides {
		if s.DelayMs >= 1 && s.DelayMs >= 0.1*u.IncreaseMs {
			where := sideName(s.Side) + " side"
			if s.Side == result.Router {
				where = "router"
			}
			named = append(named, fmt.Sprintf("%s on %s (%s), about %s ms (%s at %s)",
				s.Kind, s.Dev, where, ms(s.DelayMs), units.FormatBytes(s.BacklogBytes), units.FormatBits(s.RateBitsPerSecond)))
		}
	}
	var b strings.Builder
	switch {
	case q.Where == "elsewhere":
		fmt.Fprintf(&b, "the queue is elsewhere on the path: the queues sampled hold about %s ms of the %s ms increase", ms(q.QdiscMs), ms(u.IncreaseMs))
		if len(named) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(named, "; "))
		}
	case len(named) > 0:
		lead := "the queue: "
		if len(named) > 1 {
			lead = "the queues: "
		}
		fmt.Fprintf(&b, "%s%s; %s of the %s ms increase", lead, strings.Join(named, "; "), ms(q.QdiscMs), ms(u.IncreaseMs))
		if q.ElsewhereMs > 0 {
			fmt.Fprintf(&b, ", %s ms elsewhere on the path", ms(q.ElsewhereMs))
		}
	default:
		fmt.Fprintf(&b, "no queue built: the endpoints' qdiscs hold under %s ms", ms(max(q.QdiscMs, 1)))
	}
	var socket []string
	for _, s := range q.Sockets {
		if s.WaitMs >= 1 {
			socket = append(socket, fmt.Sprintf("%s %s, a %s ms wait", sideName(s.Side), units.FormatBytes(s.NotsentBytes), ms(s.WaitMs)))
		}
	}
	switch {
	case len(q.Sockets) == 0:
	case len(socket) == 0:
		b.WriteString("; the flows' own data waits under 1 ms in their sockets")
	default:
		// The sides apart ("; "), so that the clauses can wrap.
		fmt.Fprintf(&b, "; the flows' own data in their sockets, not in the probes' path: %s", strings.Join(socket, "; "))
	}
	return b.String()
}

// HostQueueLine says in one line, when the run's delay is mostly in a
// sending host's own qdisc with TSO-autosized packets in it
// (result.HostQueue), why a flent-like load reads less on the same path:
// flent's netperf opens its flows as the load starts, most under a full
// queue, and they hold a few KB each there (docs/cookbook.md); "" otherwise.
func HostQueueLine(u *result.UnderLoad) string {
	if u.Queue == nil || u.Queue.HostQueue == nil {
		return ""
	}
	h := u.Queue.HostQueue
	return fmt.Sprintf("flent reads less: %s is the %s's own qdisc, %s a flow opened idle (TSO autosizing)",
		h.Dev, sideName(h.Side), units.FormatBytes(h.PerFlowBytes))
}

func sideName(s result.Side) string {
	if s == result.Local {
		return "client"
	}
	return "server"
}

// underLoadCols are the starting widths of RRUL's columns.
var underLoadCols = []int{8, 8, 8}

// underLoadHeader adds RRUL's columns to a sweep's or a matrix's header
// lines: the idle and loaded median round trips and the loaded 99th
// percentile, over both kinds of probe.
func underLoadHeader(lines [][]string) [][]string {
	add := [][]string{{"Idle", "Loaded", "Loaded"}, {"RTT", "RTT", "RTT"}, {"p50", "p50", "p99"}, {"ms", "ms", "ms"}}
	for i := range lines {
		lines[i] = append(lines[i], add[i]...)
	}
	return lines
}

// underLoadCells are a point's RRUL columns; none for other tests.
func underLoadCells(s result.Summary) []string {
	u := s.UnderLoad
	if u == nil {
		return nil
	}
	return []string{ms(u.Idle.All.P50Ms), ms(u.Loaded.All.P50Ms), ms(u.Loaded.All.P99Ms)}
}

// RRULIntervalHeader is the line above RRUL's default interval lines
// (RRULTick): the load's throughput each way and the probes' round trips.
func RRULIntervalHeader(w io.Writer) {
	fmt.Fprintf(w, "%-17s  %14s  %14s  %9s  %9s  %7s\n", "Interval", "Up", "Down", "Probe p50", "Probe p99", "Answers")
}

// RRULTick writes one interval of an RRUL run as one line: the summed
// throughput of its upload flows and of its download flows, in unit u,
// and the round trips of the probes answered within it (Tick.Probes).
// ticks are the interval's ticks, one per direction; a direction the
// run does not load shows "-". The flows' own lines are TickIn's (-v).
func RRULTick(w io.Writer, ticks []result.Tick, u units.RateUnit) {
	if len(ticks) == 0 {
		return
	}
	up, down := "-", "-"
	start, end := ticks[0].Interval.StartS, ticks[0].Interval.EndS
	var probes *result.Latency
	for _, tk := range ticks {
		switch tk.Direction {
		case spec.ClientToServer:
			up = u.Format(tk.Interval.BitsPerSecond)
			start, end = tk.Interval.StartS, tk.Interval.EndS // the upload's times lead
		case spec.ServerToClient:
			down = u.Format(tk.Interval.BitsPerSecond)
		}
		if probes == nil {
			probes = tk.Probes
		}
	}
	p50, p99, n := "-", "-", 0
	if probes != nil && probes.Samples > 0 {
		p50, p99, n = ms(probes.P50Ms)+" ms", ms(probes.P99Ms)+" ms", probes.Samples
	}
	fmt.Fprintf(w, "%6.2f-%-6.2f sec  %14s  %14s  %9s  %9s  %7d\n", start, end, up, down, p50, p99, n)
}
