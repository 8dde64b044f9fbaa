package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/units"
)

// dataPathHeading writes the line under a run's heading that names the
// data path options it asks for: they change what is measured (a
// receiver that never copies the payload is not the receiver a program
// is), so the reader is told before any figure. Nothing when it asks for
// none.
func dataPathHeading(w io.Writer, t spec.Test) {
	if parts := dataPathParts(t); len(parts) > 0 {
		for _, l := range fitList("data path: ", parts, "; ", 2) {
			fmt.Fprintln(w, l)
		}
	}
}

func dataPathParts(t spec.Test) []string {
	var p []string
	pin := func(who string, l spec.CPUList) {
		switch cpus := l.CPUs(); len(cpus) {
		case 0:
		case 1:
			p = append(p, fmt.Sprintf("%s threads pinned to cpu%d", who, cpus[0]))
		default:
			p = append(p, fmt.Sprintf("%s threads pinned to cpus %s in turn", who, strings.ReplaceAll(string(l), ":", ",")))
		}
	}
	pin("client", t.LocalCPUs)
	pin("server", t.RemoteCPUs)
	switch t.SendMode() {
	case spec.ZeroCopySendfile:
		p = append(p, "zero-copy send: sendfile(2) from a memfd")
	case spec.ZeroCopyMsg:
		p = append(p, "zero-copy send: MSG_ZEROCOPY")
	}
	switch t.RxMode() {
	case spec.RxSplice:
		p = append(p, "receive: splice(2) to /dev/null, the payload is not copied to the program")
	case spec.RxDiscard:
		p = append(p, "receive: MSG_TRUNC, the kernel discards the payload without copying it")
	}
	if t.FQRateBitsPerSecond > 0 {
		p = append(p, "pacing cap "+units.FormatBits(t.FQRateBitsPerSecond)+" per stream (SO_MAX_PACING_RATE)")
	}
	if t.BusyPollMicros > 0 {
		p = append(p, fmt.Sprintf("busy polling %d us (SO_BUSY_POLL)", t.BusyPollMicros))
	}
	if t.GSOSize > 0 {
		p = append(p, fmt.Sprintf("UDP GSO: %d-byte datagrams, %d per send", t.GSOSize, t.GSOSegments()))
	}
	if t.GRO {
		p = append(p, "UDP GRO on the receiver")
	}
	// UDP batches.
	if t.SendBatch > 1 {
		p = append(p, fmt.Sprintf("UDP send batch: %d sends per sendmmsg call, not one call per datagram", t.SendBatch))
	}
	if t.RecvBatch > 1 {
		p = append(p, fmt.Sprintf("UDP receive batch: up to %d datagrams per recvmmsg call", t.RecvBatch))
	}
	return p
}

// DataPath writes what each side did about the data path options and what
// its kernel said: pinned CPUs and how busy they were, the zero-copy
// completions, the receive mode, the pacing cap and what enforces it, the
// busy polling granted, GSO and GRO. Nothing for a run without options.
func DataPath(w io.Writer, res result.Result) {
	sides := []struct {
		name string
		dp   *result.DataPath
	}{{"local", res.Local.DataPath}, {"remote", res.Remote.DataPath}}
	first := true
	for _, s := range sides {
		if s.dp == nil {
			continue
		}
		lines := dataPathLines(s.dp)
		if len(lines) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%-6s %s\n", s.name, l)
		}
	}
}

func dataPathLines(dp *result.DataPath) []string {
	var out []string
	if len(dp.PinnedCPUs) > 0 {
		var parts []string
		for _, p := range dp.PinnedCPUs {
			s := fmt.Sprintf("cpu%d (stream%s %s)", p.CPU, plural(len(p.Streams)), joinIDs(p.Streams))
			if p.UtilPct != nil {
				s += fmt.Sprintf(" %.1f%% busy", *p.UtilPct)
			}
			parts = append(parts, s)
		}
		out = append(out, "pinned: "+strings.Join(parts, ", "))
	}
	var modes []string
	switch dp.ZeroCopy {
	case spec.ZeroCopySendfile:
		modes = append(modes, "send sendfile")
	case spec.ZeroCopyMsg:
		modes = append(modes, fmt.Sprintf("send MSG_ZEROCOPY: %d sends, %d completed, %d of them copied by the kernel after all",
			dp.ZeroCopySends, dp.ZeroCopyCompleted, dp.ZeroCopyCopied))
	case spec.ZeroCopyOff:
		if dp.ZeroCopyNote != "" {
			modes = append(modes, "send copy (MSG_ZEROCOPY refused)")
		}
	}
	switch dp.Rx {
	case spec.RxSplice:
		modes = append(modes, "receive splice")
	case spec.RxDiscard:
		modes = append(modes, "receive MSG_TRUNC")
	}
	if len(modes) > 0 {
		out = append(out, "data path: "+strings.Join(modes, "; "))
	}
	if p := dp.Pacing; p != nil {
		by := "not enforced"
		switch p.HonouredBy {
		case "fq":
			by = "enforced by the fq qdisc"
		case "tcp":
			by = "enforced by TCP's internal pacing"
		}
		s := fmt.Sprintf("pacing: cap %s (%d bytes/s granted), %s", units.FormatBits(p.AskedBitsPerSecond), p.GrantedBytesPerSecond, by)
		if p.Interface != "" {
			s += fmt.Sprintf(" on %s (qdisc %s)", p.Interface, dashIfEmpty(p.Qdisc))
		}
		if p.AchievedBitsPerSecond > 0 {
			s += "; fastest stream " + units.FormatBits(p.AchievedBitsPerSecond)
		}
		out = append(out, s)
	}
	if b := dp.BusyPoll; b != nil {
		s := fmt.Sprintf("busy poll: %d us asked, %d granted", b.AskedMicros, b.GrantedMicros)
		if b.SysctlBusyPoll != nil && b.SysctlBusyRead != nil {
			s += fmt.Sprintf(" (net.core.busy_poll %d, busy_read %d)", *b.SysctlBusyPoll, *b.SysctlBusyRead)
		}
		if b.NAPIID == 0 {
			s += "; no NAPI queue behind the sockets: nothing to poll"
		} else {
			s += fmt.Sprintf("; NAPI id %d", b.NAPIID)
		}
		out = append(out, s)
	}
	if dp.GSOSize > 0 {
		out = append(out, fmt.Sprintf("UDP GSO: %d-byte datagrams", dp.GSOSize))
	}
	if dp.GRO {
		out = append(out, fmt.Sprintf("UDP GRO: %d receive buffers held several datagrams", dp.Coalesced))
	}
	// UDP batches.
	if dp.SendBatch > 1 {
		out = append(out, fmt.Sprintf("UDP send batch: %d sends per sendmmsg call", dp.SendBatch))
	}
	if dp.RecvBatch > 1 {
		out = append(out, fmt.Sprintf("UDP receive batch: up to %d datagrams per recvmmsg call", dp.RecvBatch))
	}
	if dp.RxTimestamp == spec.RxTimestampKernel {
		out = append(out, "UDP arrival times: the kernel's receive timestamps (jitter without the receiver's scheduling)")
	}
	return out
}

func joinIDs(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// dataPathSupport is the environment record's line on what the kernel
// offers the data path options.
func dataPathSupport(s sysinfo.DataPathSupport) string {
	yn := func(name string, ok bool) string {
		if ok {
			return name
		}
		return "no " + name
	}
	parts := []string{
		yn("MSG_ZEROCOPY", s.MsgZeroCopy),
		yn("UDP GSO", s.UDPGSO),
		yn("UDP GRO", s.UDPGRO),
		yn("TCP internal pacing", s.TCPInternalPacing),
	}
	if s.DefaultQdisc != "" {
		parts = append(parts, "default qdisc "+s.DefaultQdisc)
	}
	how := "by the kernel release"
	if s.Probed {
		how = "tried on sockets"
	}
	return strings.Join(parts, ", ") + " (" + how + ")"
}
