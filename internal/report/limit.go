package report

import (
	"fmt"
	"io"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// limitedBy writes what limited the run (package limit, docs/limits.md):
// one line, or one per direction when a run has two; verbose, each whole
// with its notes under it, else each as limitLine fits it in Width and
// the notes left to -v.
func limitedBy(w io.Writer, res result.Result, verbose bool) {
	line := func(head string, l *result.Limit) {
		if verbose {
			fmt.Fprintln(w, head+LimitText(l))
			limitNotes(w, l)
			return
		}
		fmt.Fprintln(w, limitLine(head, l))
	}
	if len(res.Directions) > 1 {
		any := false
		for _, d := range res.Directions {
			if l := d.Summary.Limit; l != nil {
				line(fmt.Sprintf("limited by (%s): ", dirLabel(d.Direction)), l)
				any = true
			}
		}
		if any {
			return
		}
	}
	if l := res.Summary.Limit; l != nil {
		line("limited by: ", l)
	}
}

func limitNotes(w io.Writer, l *result.Limit) {
	if l.Kind == result.LimitUnknown {
		return // LimitText says them
	}
	for _, n := range l.Notes {
		fmt.Fprintf(w, "  note: %s\n", WarningText(n))
	}
}

// limitLine is head and LimitText where that fits in Width, or else
// LimitBrief; where that does not fit either, the first of the limit's
// shorter forms that does (limitForms), ended by moreMark, and only when
// none does, LimitBrief cut (brief).
func limitLine(head string, l *result.Limit) string {
	if full := head + LimitText(l); cols(full) <= Width {
		return full
	}
	if b := head + LimitBrief(l); cols(b) <= Width {
		return b
	}
	for _, f := range limitForms(l) {
		if s := head + f + moreMark; cols(s) <= Width {
			return s
		}
	}
	return brief(head+LimitBrief(l), Width)
}

// limitForms are a limit's words shorter than LimitBrief, longest first,
// each leaving out more of its figures: a rate without the goodput, a CPU
// without its split, other processes without the busiest, unknown with
// fewer of its notes and then fewer clauses of the first.
func limitForms(l *result.Limit) []string {
	e := l.Evidence
	switch l.Kind {
	case result.LimitSenderCPU, result.LimitReceiverCPU, result.LimitRequesterCPU, result.LimitResponderCPU:
		name := LimitText(&result.Limit{Kind: l.Kind})
		if c := e.CPU; c != nil {
			return []string{fmt.Sprintf("%s (cpu%d %.1f%%)", name, c.CPU, c.UtilPct), name}
		}
	case result.LimitOtherProcesses:
		if o := e.Others; o != nil {
			return []string{fmt.Sprintf("other processes on the %s host (%.0f%% of a CPU)", o.Side, o.UtilPct),
				fmt.Sprintf("other processes on the %s host", o.Side)}
		}
	case result.LimitLink, result.LimitRateCap:
		what := "the link"
		if l.Kind == result.LimitRateCap {
			what = "the rate cap"
		}
		if e.Rate != nil {
			return []string{what + " (" + rateWhat(e.Rate) + ")", what}
		}
	case result.LimitUnknown:
		var out []string
		for k := len(l.Notes) - 1; k > 0; k-- {
			out = append(out, "unknown: "+strings.Join(WarningTexts(l.Notes[:k]), "; "))
		}
		if len(l.Notes) > 0 {
			cs := warningClauses(l.Notes[0])
			for k := len(cs) - 1; k > 0; k-- {
				out = append(out, "unknown: "+strings.Join(cs[:k], ""))
			}
		}
		return out
	}
	return nil
}

// LimitBrief is LimitText shorter, for a line of the default text that
// LimitText would make too long: a CPU without its busiest thread, other
// processes with only the busiest of them, unknown with its reasons after
// a colon (where a line is cut, brief).
func LimitBrief(l *result.Limit) string {
	e := l.Evidence
	switch l.Kind {
	case result.LimitSenderCPU, result.LimitReceiverCPU, result.LimitRequesterCPU, result.LimitResponderCPU:
		if e.CPU != nil {
			c := *e.CPU
			c.ThreadPct = 0
			e.CPU = &c
			return LimitText(&result.Limit{Kind: l.Kind, Evidence: e})
		}
	case result.LimitOtherProcesses:
		if o := e.Others; o != nil {
			s := fmt.Sprintf("other processes on the %s host (%.0f%% of a CPU", o.Side, o.UtilPct)
			if len(o.Busiest) > 0 {
				b := o.Busiest[0]
				s += fmt.Sprintf("; busiest %s, pid %d, %.0f%%", b.Name, b.ID, b.UtilPct)
			}
			return s + ")"
		}
	case result.LimitLink:
		return "the link (" + rateText(e.Rate, true) + ")"
	case result.LimitRateCap:
		return "the rate cap (" + rateText(e.Rate, true) + ")"
	case result.LimitUnknown:
		if len(l.Notes) > 0 {
			return "unknown: " + strings.Join(WarningTexts(l.Notes), "; ")
		}
	}
	return LimitText(l)
}

// LimitText says what a limit is with its main figures:
// "the sender's CPU (cpu1 99.6%: 38% sys, 61% softirq; busiest thread 97%)".
func LimitText(l *result.Limit) string {
	e := l.Evidence
	switch l.Kind {
	case result.LimitLink:
		return "the link (" + rateText(e.Rate, false) + ")"
	case result.LimitRateCap:
		return "the rate cap (" + rateText(e.Rate, false) + ")"
	case result.LimitSenderCPU:
		return "the sender's CPU" + cpuText(e.CPU)
	case result.LimitReceiverCPU:
		return "the receiver's CPU" + cpuText(e.CPU)
	case result.LimitRequesterCPU:
		return "the client's CPU" + cpuText(e.CPU)
	case result.LimitResponderCPU:
		return "the server's CPU" + cpuText(e.CPU)
	case result.LimitReceiveWindow:
		s := "the receive window"
		if t := e.TCP; t != nil {
			s += fmt.Sprintf(" (rwnd_limited %.0f%% of the window", t.RwndLimitedPct)
			if t.RcvBufBytes > 0 {
				s += ", receive buffer " + units.FormatBytes(float64(t.RcvBufBytes))
				if t.InFlightPct > 0 {
					s += fmt.Sprintf(", %.0f%% of it in flight", t.InFlightPct)
				}
			}
			s += ")"
		}
		return s
	case result.LimitSendBuffer:
		s := "the send buffer"
		if t := e.TCP; t != nil {
			s += fmt.Sprintf(" (sndbuf_limited %.0f%% of the window", t.SndbufLimitedPct)
			if t.SndBufBytes > 0 {
				s += ", send buffer " + units.FormatBytes(float64(t.SndBufBytes))
			}
			s += ")"
		}
		return s
	case result.LimitCongestion:
		if t := e.TCP; t != nil {
			return fmt.Sprintf("congestion (%.1f%% of the segments retransmitted: %d)", t.RetransPct, t.Retransmits)
		}
		return "congestion"
	case result.LimitOtherProcesses:
		o := e.Others
		if o == nil {
			return "other processes"
		}
		s := fmt.Sprintf("other processes on the %s host (%.0f%% of a CPU", o.Side, o.UtilPct)
		for _, b := range o.Busiest {
			s += fmt.Sprintf("; %s, pid %d, %.0f%% (cpu%d)", b.Name, b.ID, b.UtilPct, b.LastCPU)
		}
		if c := e.CPU; c != nil {
			s += fmt.Sprintf("; the test's busiest thread ran %.0f%% and waited %.0f%% on cpu%d", c.ThreadPct, c.ThreadWaitPct, c.CPU)
		}
		return s + ")"
	case result.LimitLatency:
		r := e.RTT
		if r == nil || r.MeanMicros <= 0 {
			return "the round trip"
		}
		return fmt.Sprintf("the round trip (%d in flight at a mean of %.1f µs allow %.0f/s; %.0f%% of that reached)",
			r.InFlight, r.MeanMicros, r.PredictedPerSecond, r.AchievedPct)
	}
	if len(l.Notes) == 0 {
		return "unknown"
	}
	return "unknown (" + strings.Join(WarningTexts(l.Notes), "; ") + ")"
}

// rateText is a rate limit's figures; short, the goodput's share of what
// the rate allows without the words "after headers".
func rateText(r *result.LimitRate, short bool) string {
	if r == nil {
		return "no figures"
	}
	what := rateWhat(r)
	if r.Source == "rate" {
		return fmt.Sprintf("%s of payload; goodput %.1f%% of it", what, r.GoodputPct)
	}
	if short {
		return fmt.Sprintf("%s; goodput %.1f%% of %s", what, r.GoodputPct, units.FormatBits(r.AllowedBitsPerSecond))
	}
	return fmt.Sprintf("%s; goodput %.1f%% of the %s it allows after headers", what, r.GoodputPct, units.FormatBits(r.AllowedBitsPerSecond))
}

// rateWhat names a rate limit's rate and where it was set.
func rateWhat(r *result.LimitRate) string {
	var what string
	switch r.Source {
	case "qdisc":
		what = fmt.Sprintf("%s %s on %s", r.Qdisc, units.FormatBits(r.BitsPerSecond), r.Interface)
	case "interface_speed":
		what = fmt.Sprintf("%s at %s", r.Interface, units.FormatBits(r.BitsPerSecond))
	case "rate":
		what = "-b " + units.FormatBits(r.BitsPerSecond)
	case "fq_rate":
		what = "--fq-rate " + units.FormatBits(r.BitsPerSecond)
	default:
		what = units.FormatBits(r.BitsPerSecond)
	}
	if r.Side != "" && r.Source != "rate" && r.Source != "fq_rate" {
		what += ", " + string(r.Side) + " side"
	}
	return what
}

func cpuText(c *result.LimitCPU) string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf(" (cpu%d %.1f%%", c.CPU, c.UtilPct)
	var parts []string
	for _, p := range []struct {
		name string
		pct  float64
	}{{"user", c.UserPct}, {"sys", c.SystemPct}, {"softirq", c.SoftIRQPct}, {"irq", c.IRQPct}, {"steal", c.StealPct}} {
		if p.pct >= 1 {
			parts = append(parts, fmt.Sprintf("%.0f%% %s", p.pct, p.name))
		}
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	if c.ThreadPct > 0 {
		s += fmt.Sprintf("; busiest thread %.0f%%", c.ThreadPct)
	}
	return s + ")"
}

// LimitShort is a limit's kind in a table's column, at most 8
// characters; "-" for none.
func LimitShort(l *result.Limit) string {
	if l == nil {
		return "-"
	}
	switch l.Kind {
	case result.LimitSenderCPU:
		return "snd CPU"
	case result.LimitReceiverCPU:
		return "rcv CPU"
	case result.LimitRequesterCPU:
		return "clnt CPU"
	case result.LimitResponderCPU:
		return "srv CPU"
	case result.LimitReceiveWindow:
		return "rwnd"
	case result.LimitSendBuffer:
		return "sndbuf"
	case result.LimitCongestion:
		return "congest."
	case result.LimitRateCap:
		return "rate cap"
	case result.LimitOtherProcesses:
		return "others"
	}
	return string(l.Kind) // link, latency, unknown
}
