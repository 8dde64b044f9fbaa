// Package limit says what limited a result: the link, a side's CPU, the
// receive window, the send buffer, congestion, a rate cap, other
// processes, or that it cannot tell. It reads only the joined result (the
// figures both sides recorded: CPU with its split, threads and other
// processes, TCP_INFO, the environment's qdisc rates and interface
// speeds, the data path's pacing, UDP accounting) and does no I/O and
// reads no clock. docs/limits.md gives the rules, their thresholds and
// where they can be wrong.
package limit

import (
	"cmp"
	"math"
	"net"
	"net/netip"
	"slices"
	"strings"

	"wirespeed/internal/measure"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// Thresholds; docs/limits.md says why each is what it is.
const (
	// RateHoldPct: the goodput is at a rate when it is at least this
	// percent of the payload rate the rate allows after headers.
	RateHoldPct = 90
	// RateOverPct: a goodput above this percent of a rate shows the rate
	// was not on the path (or not in force), and it is not the limit.
	RateOverPct = 105
	// CPUBoundPct: a thread is CPU-bound when the CPU time it used, plus
	// the time it waited runnable for a CPU, plus the softirq and irq time
	// of the CPU it ran on, is at least this percent of the window.
	CPUBoundPct = 90
	// SoftIRQBoundPct: a receiver's CPU is saturated by its softirq when
	// the busiest CPU is at least SaturatedCPUPct busy and this percent
	// of its time is softirq and irq.
	SoftIRQBoundPct = 50
	SaturatedCPUPct = 95
	// StarvedWaitPct: a thread that waited runnable this percent of the
	// window or more was kept from its CPU, and
	// OthersPct is how much other processes must have used (percent of
	// one CPU) to be named for it.
	StarvedWaitPct = 25
	OthersPct      = 20
	// OthersNotePct: other processes using this much CPU get a note
	// whatever the limit is.
	OthersNotePct = 50
	// LimitedPct: TCP_INFO's rwnd_limited or sndbuf_limited for at least
	// this percent of the window makes that the limit.
	LimitedPct = 50
	// WindowAlsoPct: a receive window the user fixed and full at least
	// this percent of the window, short of LimitedPct, is named beside
	// a bound CPU (rule 4, `also`), or as the limit when nothing else is.
	WindowAlsoPct = 25
	// InFlightPct: a receive window the user fixed is named the same way
	// when what was in flight (goodput times smoothed RTT) filled at least
	// this percent of the receive buffer. On this kernel's veth, -S 4K
	// (an 8 KB buffer) carried 2.1 Gbit/s at a 33 us RTT, 8.5 KB in
	// flight (104%), while rwnd_limited read 6-23% with the CPU that
	// moves both ends' packets busy: -S 16K gave 4x the rate, so the
	// window held it whatever rwnd_limited said. A buffer the window did
	// not fill (-S 1M on loopback, 16%) is not named.
	InFlightPct = 40
	// RetransPct: retransmitted segments at least this percent of those
	// sent make congestion the limit; UDP loss at this level that nothing
	// else explains gets a note.
	RetransPct = 1
	// DeviceDropPct: a receiver's device that dropped this share of the
	// packets it received (rx_dropped, rx_missed, rx_over_errors) could
	// not hand them to the kernel as fast as they came.
	DeviceDropPct = 0.1
	// LatencyPct: a request/response rate at least this percent of what
	// its latency allows (in flight / mean latency) is latency-bound.
	LatencyPct = 80
)

// virtualDrivers report a nominal speed that limits nothing (veth says
// 10000 Mb/s).
var virtualDrivers = map[string]bool{"veth": true, "tun": true, "dummy": true, "bridge": true, "vxlan": true, "macvlan": true, "ipvlan": true, "loopback": true}

// Diagnose sets the limit of each direction of res and of the run. It
// reads nothing but res.
func Diagnose(res *result.Result) {
	for i := range res.Directions {
		d := &res.Directions[i]
		var l result.Limit
		if res.Spec.Kind.RR() {
			l = diagnoseRR(res, d)
		} else {
			l = diagnoseStream(res, d)
		}
		d.Summary.Limit = &l
	}
	res.Summary.Limit = runLimit(res.Directions)
}

// runLimit is the run's limit: its direction's, or for two directions
// the kind both share, or unknown naming both.
func runLimit(ds []result.DirectionResult) *result.Limit {
	switch len(ds) {
	case 0:
		return &result.Limit{Kind: result.LimitUnknown, Notes: []result.Warning{result.Coded(result.NoteNoDirection, nil, nil)}}
	case 1:
		l := *ds[0].Summary.Limit
		return &l
	}
	a, b := ds[0].Summary.Limit, ds[1].Summary.Limit
	if a.Kind == b.Kind && a.Side == b.Side {
		l := *a
		l.Notes = append([]result.Warning{result.Coded(result.NoteBothDirections, nil, nil)}, a.Notes...)
		return &l
	}
	return &result.Limit{Kind: result.LimitUnknown, Notes: []result.Warning{result.Coded(result.NoteDirectionsDiffer, map[string]string{
		"first_direction": string(ds[0].Direction), "first_kind": string(a.Kind), "first_side": string(a.Side),
		"second_direction": string(ds[1].Direction), "second_kind": string(b.Kind), "second_side": string(b.Side)}, nil)}}
}

// sideView is one side's figures for a diagnosis.
type sideView struct {
	side   result.Side
	cpu    *measure.CPU
	env    *sysinfo.Env
	peer   *measure.CPU
	pinned []int // the CPUs its data path was pinned to
}

func view(res *result.Result, s result.Side) sideView {
	v := sideView{side: s, cpu: res.Summary.LocalCPU, env: res.Local.Env, peer: res.Summary.RemoteCPU}
	dp := res.Local.DataPath
	if s == result.Remote {
		v = sideView{side: s, cpu: res.Summary.RemoteCPU, env: res.Remote.Env, peer: res.Summary.LocalCPU}
		dp = res.Remote.DataPath
	}
	if dp != nil {
		for _, p := range dp.PinnedCPUs {
			v.pinned = append(v.pinned, p.CPU)
		}
	}
	return v
}

// cpuState is what a side's CPU figures say about its data path.
type cpuState struct {
	known   bool    // the side's threads were measured
	bound   bool    // the busiest thread wanted a CPU the whole window
	starved bool    // it waited for one a good part of the time
	load    float64 // thread busy + wait + its CPU's softirq, percent
	softirq bool    // the busiest CPU was saturated by softirq and irq
	ev      *result.LimitCPU
	others  *result.LimitOthers
}

// missing lists the sides of a and b whose threads were not measured.
func missing(a sideView, ac cpuState, b sideView, bc cpuState) []result.Side {
	var out []result.Side
	if !ac.known {
		out = append(out, a.side)
	}
	if !bc.known && b.side != a.side {
		out = append(out, b.side)
	}
	return out
}

// cpuMissing names what to say of CPU figures missing from sides: with
// "missing_sides" empty, run with --cpu (the test did not ask for them);
// else the sides that sent none though it did, "local and remote" (an
// iperf3 server never does: run --iperf3 has only the local side's).
func cpuMissing(t spec.Test, sides ...result.Side) map[string]string {
	if !t.CPU {
		return map[string]string{"missing_sides": ""}
	}
	var names []string
	for _, s := range sides {
		names = append(names, string(s))
	}
	return map[string]string{"missing_sides": strings.Join(names, " and ")}
}

func cpuOf(v sideView) cpuState {
	c := v.cpu
	if c == nil || c.CPUs == 0 {
		// None, or an iperf3 peer's process time only.
		return cpuState{}
	}
	// Without its threads (a server before they were recorded) a side's
	// CPU cannot be told bound; a softirq-saturated CPU still can.
	st := cpuState{known: len(c.Threads) > 0}
	ev := &result.LimitCPU{CPU: c.BusiestCPU, UtilPct: c.BusiestCPUPct}
	if sh := c.BusiestCPUShares; sh != nil {
		ev.UserPct, ev.SystemPct, ev.SoftIRQPct, ev.IRQPct, ev.StealPct = sh.UserPct+sh.NicePct, sh.SystemPct, sh.SoftIRQPct, sh.IRQPct, sh.StealPct
		st.softirq = c.BusiestCPUPct >= SaturatedCPUPct && sh.SoftIRQPct+sh.IRQPct >= SoftIRQBoundPct
	}
	if len(c.Threads) > 0 {
		// The busiest thread, or with the data path pinned (-T) the
		// busiest on a pinned CPU: a data-path thread.
		th := c.Threads[0]
		if i := slices.IndexFunc(c.Threads, func(t measure.TaskCPU) bool { return slices.Contains(v.pinned, t.LastCPU) }); i >= 0 {
			th = c.Threads[i]
		}
		ev.ThreadPct, ev.ThreadID, ev.ThreadWaitPct = th.UtilPct, th.ID, th.WaitPct
		st.load = th.UtilPct + th.WaitPct
		// The evidence is the CPU the thread last ran on (its pinned
		// one, with -T), and softirq work done there is not in the
		// thread's own time when the kernel accounts irq time apart.
		if sh, ok := sharesOf(c, th.LastCPU); ok {
			ev.CPU, ev.UtilPct = sh.CPU, sh.UtilPct
			ev.UserPct, ev.SystemPct, ev.SoftIRQPct, ev.IRQPct, ev.StealPct = sh.UserPct+sh.NicePct, sh.SystemPct, sh.SoftIRQPct, sh.IRQPct, sh.StealPct
			st.load += sh.SoftIRQPct + sh.IRQPct
		} else if th.LastCPU >= 0 {
			for k, id := range c.PerCPUIDs {
				if id == th.LastCPU && k < len(c.PerCPUUtilPct) {
					ev.CPU, ev.UtilPct = id, c.PerCPUUtilPct[k]
					ev.UserPct, ev.SystemPct, ev.SoftIRQPct, ev.IRQPct, ev.StealPct = 0, 0, 0, 0, 0
				}
			}
		}
		st.bound = st.load >= CPUBoundPct
		st.starved = th.WaitPct >= StarvedWaitPct
	}
	st.ev = ev
	st.others = others(v)
	return st
}

// sharesOf is the split of CPU id from a side's figures: the busiest
// CPU's or one its threads ran on.
func sharesOf(c *measure.CPU, id int) (measure.CPUShares, bool) {
	if sh := c.BusiestCPUShares; sh != nil && c.BusiestCPU == id {
		s := *sh
		s.CPU = id // records before the field had it
		return s, true
	}
	for _, sh := range c.ThreadCPUShares {
		if sh.CPU == id {
			return sh, true
		}
	}
	return measure.CPUShares{}, false
}

// others is the CPU processes other than this side's and its peer's took
// on the host, nil without the figures. When the side's data path was
// pinned (-T), those that last ran on its CPUs come first: they are the
// ones that took them.
func others(v sideView) *result.LimitOthers {
	c := v.cpu
	if c == nil || c.TasksError != "" || c.Threads == nil {
		return nil
	}
	o := &result.LimitOthers{Side: v.side, UtilPct: c.OtherProcessesUtilPct}
	for _, p := range c.OtherProcesses {
		if v.peer != nil && v.peer.PID != 0 && p.ID == v.peer.PID {
			// The other side of the test on the same host (loopback, a
			// lab): its CPU is the test's, not another process's.
			o.UtilPct -= p.UtilPct
			continue
		}
		o.Busiest = append(o.Busiest, p)
	}
	// Stable: within each group, busiest first as recorded.
	slices.SortStableFunc(o.Busiest, func(a, b measure.TaskCPU) int {
		return cmp.Compare(btoi(!slices.Contains(v.pinned, a.LastCPU)), btoi(!slices.Contains(v.pinned, b.LastCPU)))
	})
	if len(o.Busiest) > 3 {
		o.Busiest = o.Busiest[:3]
	}
	o.UtilPct = max(o.UtilPct, 0)
	if c.CPUs > 0 {
		o.HostPct = o.UtilPct / float64(c.CPUs)
	}
	return o
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// note says when other processes were busy on a side, whatever the limit.
func (st cpuState) note(l *result.Limit) {
	if o := st.others; o != nil && o.UtilPct >= OthersNotePct && l.Kind != result.LimitOtherProcesses {
		n := result.Coded(result.NoteOthersBusy, map[string]string{"side": string(o.Side)}, map[string]float64{"util_pct": o.UtilPct})
		n.Processes = o.Busiest
		l.Notes = append(l.Notes, n)
	}
}

func diagnoseStream(res *result.Result, d *result.DirectionResult) result.Limit {
	snd, rcv := view(res, d.Sender), view(res, d.Receiver)
	sc, rc := cpuOf(snd), cpuOf(rcv)
	l := decideStream(res, d, snd, rcv, sc, rc)
	wireNotes(res, d, &l)
	sc.note(&l)
	if !sameHost(snd, rcv) {
		rc.note(&l)
	}
	return l
}

// sameHost is true when both sides list each other as another process
// of their host: a loopback or lab test, where both read one /proc.
func sameHost(a, b sideView) bool {
	if a.cpu == nil || b.cpu == nil {
		return false
	}
	for _, p := range a.cpu.OtherProcesses {
		if p.ID == b.cpu.PID {
			return true
		}
	}
	return a.cpu.PID != 0 && a.cpu.PID == b.cpu.PID
}

func decideStream(res *result.Result, d *result.DirectionResult, snd, rcv sideView, sc, rc cpuState) result.Limit {
	t := res.Spec
	g := d.Summary.BitsPerSecond
	if g <= 0 || d.Summary.Bytes <= 0 {
		return result.Limit{Kind: result.LimitUnknown, Notes: []result.Warning{result.Coded(result.NoteNothingReceived, nil, nil)}}
	}
	tcp := tcpEvidence(d)
	var notes []result.Warning

	// A rate on the route or a cap, the lowest one the goodput reached.
	var best *result.LimitRate
	for _, r := range rates(res, d, snd, rcv) {
		r.GoodputPct = 100 * g / r.AllowedBitsPerSecond
		switch {
		case r.GoodputPct > RateOverPct:
			notes = append(notes, result.Coded(result.NoteRateNotInForce,
				map[string]string{"source": r.Source, "qdisc": r.Qdisc, "interface": r.Interface},
				map[string]float64{"goodput_pct": r.GoodputPct, "rate_bps": r.BitsPerSecond}))
		case r.GoodputPct >= RateHoldPct && (best == nil || r.AllowedBitsPerSecond < best.AllowedBitsPerSecond):
			best = &r
		}
	}
	if best != nil {
		kind := result.LimitLink
		if best.Source == "rate" || best.Source == "fq_rate" {
			kind = result.LimitRateCap
		}
		return result.Limit{Kind: kind, Side: best.Side, Evidence: result.LimitEvidence{Rate: best, TCP: tcp}, Notes: notes}
	}

	// A thread that wanted its CPU and did not get it: other processes.
	for _, c := range []cpuState{sc, rc} {
		if c.starved && c.others != nil && c.others.UtilPct >= OthersPct {
			return windowBeside(t, rcv.side, result.Limit{Kind: result.LimitOtherProcesses, Side: c.others.Side,
				Evidence: result.LimitEvidence{CPU: c.ev, Others: c.others, TCP: tcp}, Notes: notes})
		}
	}
	// A receive window the user fixed (-S, or -s on the client's side)
	// and full most of the window is the limit: the user asked for that
	// window, and the data could not go faster than it whatever the
	// receiver's CPU did. A receiver's CPU near saturation beside it is
	// named too (-S 4K over veth, rwnd_limited 71% and the receiver's
	// busiest thread at 83%, was once called receiver_cpu).
	if tcp != nil && tcp.RwndLimitedPct >= LimitedPct && fixedRcvBuf(t, rcv.side) {
		l := result.Limit{Kind: result.LimitReceiveWindow, Side: rcv.side, Evidence: result.LimitEvidence{TCP: tcp, CPU: rc.ev}, Notes: notes}
		if rc.bound || (rc.softirq && !sameHost(snd, rcv)) {
			l.Also = append(l.Also, result.LimitReceiverCPU)
			l.Notes = append(l.Notes, result.Coded(result.NoteReceiverCPUAlso, nil, map[string]float64{"load_pct": rc.load}))
		}
		return l
	}
	// A CPU-bound side; both when they share a host: the busier one.
	switch {
	case sc.bound && (!rc.bound || sc.load >= rc.load):
		return windowBeside(t, rcv.side, result.Limit{Kind: result.LimitSenderCPU, Side: snd.side, Evidence: result.LimitEvidence{CPU: sc.ev, TCP: tcp}, Notes: notes})
	case rc.bound:
		return windowBeside(t, rcv.side, result.Limit{Kind: result.LimitReceiverCPU, Side: rcv.side, Evidence: result.LimitEvidence{CPU: rc.ev, TCP: tcp}, Notes: notes})
	case rc.softirq && !sameHost(snd, rcv):
		return windowBeside(t, rcv.side, result.Limit{Kind: result.LimitReceiverCPU, Side: rcv.side, Evidence: result.LimitEvidence{CPU: rc.ev, TCP: tcp},
			Notes: append(notes, result.Coded(result.NoteSoftIRQSaturated, nil, nil))})
	}

	if tcp != nil {
		if tcp.SndbufLimitedPct >= LimitedPct {
			return result.Limit{Kind: result.LimitSendBuffer, Side: snd.side, Evidence: result.LimitEvidence{TCP: tcp, CPU: sc.ev}, Notes: notes}
		}
		if tcp.RwndLimitedPct >= LimitedPct {
			// A full receive window is a small window or a receiver
			// that does not read fast enough; only the receiver's CPU
			// tells them apart, or a buffer the user fixed.
			if rc.known || fixedRcvBuf(t, rcv.side) {
				return result.Limit{Kind: result.LimitReceiveWindow, Side: rcv.side, Evidence: result.LimitEvidence{TCP: tcp, CPU: rc.ev}, Notes: notes}
			}
			notes = append(notes, result.Coded(result.NoteRwndWithoutCPU, cpuMissing(t, rcv.side), map[string]float64{"rwnd_limited_pct": tcp.RwndLimitedPct}))
		}
		// A window the user fixed that held the rate part of the
		// time, or that what was in flight filled, with no CPU bound
		// beside it: the window is the limit.
		if windowHeld(t, rcv.side, tcp) {
			return result.Limit{Kind: result.LimitReceiveWindow, Side: rcv.side, Evidence: result.LimitEvidence{TCP: tcp, CPU: rc.ev}, Notes: notes}
		}
		if tcp.RetransPct >= RetransPct {
			return result.Limit{Kind: result.LimitCongestion, Evidence: result.LimitEvidence{TCP: tcp, CPU: sc.ev}, Notes: notes}
		}
	}
	if u := d.Summary.UDPSummary; u != nil && u.LossPct >= RetransPct {
		notes = append(notes, result.Coded(result.NoteUDPLoss, nil, map[string]float64{record.Loss.Name: u.LossPct}))
	}
	if w := wireOf(res, rcv.side); w != nil && dropPct(w) >= DeviceDropPct && !sameDevice(res) {
		// The receiver's device dropped what it could not hand on: its
		// CPU (the softirq that empties the ring) fell behind, whatever
		// its totals say.
		return result.Limit{Kind: result.LimitReceiverCPU, Side: rcv.side, Evidence: result.LimitEvidence{TCP: tcp, CPU: rc.ev},
			Notes: append(notes, result.Coded(result.NoteReceiverDeviceFull, map[string]string{"device": w.Device}, map[string]float64{"drop_pct": dropPct(w)}))}
	}
	if !sc.known || !rc.known {
		notes = append(notes, result.Coded(result.NoteNoCPUToTell, cpuMissing(t, missing(snd, sc, rcv, rc)...), nil))
	} else {
		notes = append(notes, result.Coded(result.NoteNoCPUSaturated, nil, map[string]float64{"sender_load_pct": sc.load, "receiver_load_pct": rc.load}))
	}
	if len(rates(res, d, snd, rcv)) == 0 {
		notes = append(notes, result.Coded(result.NoteNoRateKnown, nil, nil))
	}
	return result.Limit{Kind: result.LimitUnknown, Evidence: result.LimitEvidence{TCP: tcp, CPU: sc.ev}, Notes: notes}
}

// fixedRcvBuf is true when the user set the receiving side's buffer.
func fixedRcvBuf(t spec.Test, s result.Side) bool {
	if s == result.Remote {
		return t.RemoteSockBuf > 0
	}
	return t.LocalSockBuf > 0
}

// tcpEvidence sums the senders' TCP_INFO figures of a direction: nil for
// UDP, and without the limited times on kernels before 4.9.
func tcpEvidence(d *result.DirectionResult) *result.LimitTCP {
	var e result.LimitTCP
	var n, streams int
	var segs float64
	win := d.Summary.SenderElapsedS
	for _, st := range d.Streams {
		s := st.Sender
		if s.TCPInfo == nil {
			continue
		}
		streams++
		e.Retransmits += s.Retransmits
		if mss := s.TCPInfo.SndMSS; mss > 0 {
			segs += float64(s.Bytes) / float64(mss)
		}
		if e.SndBufBytes == 0 || (s.SndBufEnd > 0 && s.SndBufEnd < e.SndBufBytes) {
			e.SndBufBytes = s.SndBufEnd
		}
		if r := st.Receiver.RcvBufEnd; e.RcvBufBytes == 0 || (r > 0 && r < e.RcvBufBytes) {
			e.RcvBufBytes = r
		}
		if r, el := st.Receiver.RcvBufEnd, d.Summary.ElapsedS; r > 0 && el > 0 && s.TCPInfo.RTTMicros > 0 {
			inFlight := float64(st.Receiver.Bytes) / el * s.TCPInfo.RTTMicros / 1e6
			e.InFlightPct = max(e.InFlightPct, 100*inFlight/float64(r))
		}
		if tl := s.TCPLimited; tl != nil && win > 0 {
			n++
			w := win * 1e6
			e.RwndLimitedPct = max(e.RwndLimitedPct, 100*float64(tl.RwndLimitedMicros)/w)
			e.SndbufLimitedPct = max(e.SndbufLimitedPct, 100*float64(tl.SndbufLimitedMicros)/w)
			e.BusyPct = max(e.BusyPct, 100*float64(tl.BusyMicros)/w)
		}
	}
	if streams == 0 {
		return nil
	}
	if segs > 0 {
		e.RetransPct = 100 * float64(e.Retransmits) / segs
	}
	return &e
}

// rates are the rates on the direction's route and its caps, each with
// the payload rate it allows.
func rates(res *result.Result, d *result.DirectionResult, snd, rcv sideView) []result.LimitRate {
	t := res.Spec
	streams := max(len(d.Streams), 1)
	ov := overhead(res, d, snd)
	var rs []result.LimitRate
	if t.RateBitsPerSecond > 0 && !t.Kind.RR() {
		// -b paces each stream's payload, UDP's and TCP's alike.
		r := t.RateBitsPerSecond * float64(streams)
		rs = append(rs, result.LimitRate{Source: "rate", Side: snd.side, BitsPerSecond: r, AllowedBitsPerSecond: r})
	}
	if t.FQRateBitsPerSecond > 0 {
		// SO_MAX_PACING_RATE counts IP packets: headers without the
		// link layer's.
		r := t.FQRateBitsPerSecond * float64(streams)
		rs = append(rs, result.LimitRate{Source: "fq_rate", Side: snd.side, BitsPerSecond: r, AllowedBitsPerSecond: r * ov.payload / (ov.payload + ov.ip)})
	}
	if ifc := iface(snd); ifc != nil {
		if q := ifc.Qdisc; q != nil && q.RateBitsPerSecond > 0 {
			r := float64(q.RateBitsPerSecond)
			rs = append(rs, result.LimitRate{Source: "qdisc", Qdisc: q.Kind, Interface: ifc.Name, Side: snd.side,
				BitsPerSecond: r, AllowedBitsPerSecond: r * ov.payload / (ov.payload + ov.ip + ov.frame)})
		}
	}
	for _, v := range []sideView{snd, rcv} {
		ifc := iface(v)
		if ifc == nil || ifc.SpeedMbps <= 0 || virtualDrivers[ifc.Driver] {
			continue
		}
		r := float64(ifc.SpeedMbps) * 1e6
		rs = append(rs, result.LimitRate{Source: "interface_speed", Interface: ifc.Name, Side: v.side,
			BitsPerSecond: r, AllowedBitsPerSecond: r * ov.payload / (ov.payload + ov.ip + ov.frame + ov.wire)})
	}
	return rs
}

func iface(v sideView) *sysinfo.Interface {
	if v.env == nil {
		return nil
	}
	return v.env.Interface
}

// perPacket is the bytes around each packet's payload, by layer.
type perPacket struct {
	payload float64 // payload bytes per packet
	ip      float64 // IP and transport headers (and options)
	frame   float64 // Ethernet header, what a qdisc counts beyond IP
	wire    float64 // FCS, preamble and gap: what the line rate counts beyond that
}

func overhead(res *result.Result, d *result.DirectionResult, snd sideView) perPacket {
	p := perPacket{frame: 14, wire: 4 + 8 + 12}
	mtu := 1500
	if ifc := iface(snd); ifc != nil && ifc.MTU > 0 {
		mtu = ifc.MTU
	}
	ipHdr := 20.0
	if ipv6(res) {
		ipHdr = 40
	}
	if res.Spec.Kind.UDP() {
		size := res.Spec.SendSize
		if res.Spec.GSOSize > 0 {
			size = res.Spec.GSOSize
		}
		p.payload = float64(max(size, 1))
		// A datagram larger than the MTU goes in fragments, each with
		// its own IP header and frame.
		perFrag := float64(mtu) - ipHdr
		frags := math.Max(1, math.Ceil((p.payload+8)/math.Floor(perFrag/8)/8))
		p.ip = 8 + frags*ipHdr
		p.frame *= frags
		p.wire *= frags
		return p
	}
	// TCP: snd_mss already leaves out the options (timestamps), so the
	// headers are the path MTU less it.
	for _, st := range d.Streams {
		if ti := st.Sender.TCPInfo; ti != nil && ti.SndMSS > 0 {
			pm := ti.PMTU
			if pm <= 0 {
				pm = mtu
			}
			p.payload, p.ip = float64(ti.SndMSS), float64(pm-ti.SndMSS)
			return p
		}
	}
	p.ip = ipHdr + 20 + 12
	p.payload = float64(mtu) - p.ip
	return p
}

// ipv6 is true when the test ran over IPv6, by the server's address.
func ipv6(res *result.Result) bool {
	if res.Spec.IPVersion == 6 {
		return true
	}
	host := res.Remote.Address
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Is6() && !a.Is4In6()
}

func diagnoseRR(res *result.Result, d *result.DirectionResult) result.Limit {
	req, resp := view(res, d.Sender), view(res, d.Receiver)
	qc, pc := cpuOf(req), cpuOf(resp)
	l := decideRR(res, d, req, resp, qc, pc)
	qc.note(&l)
	if !sameHost(req, resp) {
		pc.note(&l)
	}
	return l
}

func decideRR(res *result.Result, d *result.DirectionResult, req, resp sideView, qc, pc cpuState) result.Limit {
	rr := d.Summary.RRSummary
	if rr == nil || rr.Transactions <= 0 {
		return result.Limit{Kind: result.LimitUnknown, Notes: []result.Warning{result.Coded(result.NoteNoTransaction, nil, nil)}}
	}
	t := res.Spec
	ev := &result.LimitRTT{MeanMicros: rr.Latency.Mean, InFlight: max(len(d.Streams), 1) * max(t.Burst, 1), BusyPollMicros: t.BusyPollMicros}
	if ev.MeanMicros > 0 {
		ev.PredictedPerSecond = float64(ev.InFlight) / (ev.MeanMicros / 1e6)
		ev.AchievedPct = 100 * rr.TransactionsPerSecond / ev.PredictedPerSecond
	}
	var notes []result.Warning
	for _, c := range []cpuState{qc, pc} {
		if c.starved && c.others != nil && c.others.UtilPct >= OthersPct {
			return result.Limit{Kind: result.LimitOtherProcesses, Side: c.others.Side, Evidence: result.LimitEvidence{CPU: c.ev, Others: c.others, RTT: ev}}
		}
	}
	if t.BusyPollMicros > 0 {
		// Busy polling spins by design: a saturated CPU says nothing.
		notes = append(notes, result.Coded(result.NoteBusyPolling, nil, map[string]float64{"busy_poll_us": float64(t.BusyPollMicros)}))
	} else {
		switch {
		case qc.bound && (!pc.bound || qc.load >= pc.load):
			return result.Limit{Kind: result.LimitRequesterCPU, Side: req.side, Evidence: result.LimitEvidence{CPU: qc.ev, RTT: ev}}
		case pc.bound:
			return result.Limit{Kind: result.LimitResponderCPU, Side: resp.side, Evidence: result.LimitEvidence{CPU: pc.ev, RTT: ev}}
		}
	}
	if (qc.known && pc.known || t.BusyPollMicros > 0) && ev.AchievedPct >= LatencyPct {
		return result.Limit{Kind: result.LimitLatency, Evidence: result.LimitEvidence{RTT: ev}, Notes: notes}
	}
	if !qc.known || !pc.known {
		notes = append(notes, result.Coded(result.NoteNoCPUToTellLatency, cpuMissing(t, missing(req, qc, resp, pc)...), nil))
	}
	return result.Limit{Kind: result.LimitUnknown, Evidence: result.LimitEvidence{RTT: ev}, Notes: notes}
}

// OfMean sets the limit of a mean result (client.Iterate): each
// direction's, and the run's, is the kind most of the iterations had,
// with the evidence of the last iteration that had it. result.Mean keeps the
// last run's figures but not its summaries' limits.
func OfMean(out *result.Result, rs []result.Result) {
	if len(rs) == 0 {
		return
	}
	for d := range out.Directions {
		var ls []*result.Limit
		for _, r := range rs {
			if d < len(r.Directions) && r.Directions[d].Direction == out.Directions[d].Direction {
				ls = append(ls, r.Directions[d].Summary.Limit)
			}
		}
		out.Directions[d].Summary.Limit = mostCommon(ls)
	}
	var ls []*result.Limit
	for _, r := range rs {
		ls = append(ls, r.Summary.Limit)
	}
	out.Summary.Limit = mostCommon(ls)
	if out.Summary.Limit == nil && len(out.Directions) > 0 && out.Directions[0].Summary.Limit != nil {
		out.Summary.Limit = runLimit(out.Directions)
	}
}

// mostCommon is the limit of the kind (and side) most of ls have, the
// last one of it; nil when none has one. A tie goes to the later.
func mostCommon(ls []*result.Limit) *result.Limit {
	count := map[string]int{}
	var best *result.Limit
	bestN := 0
	for _, l := range ls {
		if l == nil {
			continue
		}
		k := string(l.Kind) + "/" + string(l.Side)
		count[k]++
		if count[k] >= bestN {
			best, bestN = l, count[k]
		}
	}
	if best == nil {
		return nil
	}
	c := *best
	if n := len(ls); bestN < n {
		c.Notes = append([]result.Warning{result.Coded(result.NoteIterationsOf, nil, map[string]float64{"iterations_with": float64(bestN), "iterations": float64(n)})}, c.Notes...)
	}
	return &c
}

// wireOf is a side's device figures, nil when not read.
func wireOf(res *result.Result, s result.Side) *result.Wire {
	if s == result.Remote {
		return res.Remote.Wire
	}
	return res.Local.Wire
}

// sameDevice is true when both sides read one device (loopback): its
// drops are not the receiver's alone.
func sameDevice(res *result.Result) bool {
	return res.Local.Wire != nil && res.Local.Wire.Loopback
}

// dropPct is the share of received packets a device dropped, percent.
func dropPct(w *result.Wire) float64 {
	l := w.Link
	d := l.RxDropped + l.RxMissed + l.RxOverErrs
	if d == 0 {
		return 0
	}
	return 100 * float64(d) / float64(l.RxPackets+d)
}

// wireNotes adds what the devices say to a stream direction's limit: a
// CPU limit gets the packets per second and bytes per packet its device
// handled (a CPU's cost is per packet: TSO, GSO, GRO and a larger MTU
// make fewer, larger ones), and a receiver's device that dropped gets a
// note whatever the limit.
func wireNotes(res *result.Result, d *result.DirectionResult, l *result.Limit) {
	snd, rcv := wireOf(res, d.Sender), wireOf(res, d.Receiver)
	switch l.Kind {
	case result.LimitSenderCPU:
		if snd != nil && snd.TxPacketsPerSecond > 0 {
			l.Notes = append(l.Notes, result.Coded(result.NoteSenderDevicePackets, map[string]string{"device": snd.Device},
				map[string]float64{"packets_per_s": snd.TxPacketsPerSecond, "bytes_per_packet": snd.TxBytesPerPacket}))
		}
	case result.LimitReceiverCPU:
		if rcv != nil && rcv.RxPacketsPerSecond > 0 {
			l.Notes = append(l.Notes, result.Coded(result.NoteReceiverDevicePacket, map[string]string{"device": rcv.Device},
				map[string]float64{"packets_per_s": rcv.RxPacketsPerSecond, "bytes_per_packet": rcv.RxBytesPerPacket}))
		}
	}
	if rcv != nil && l.Kind != result.LimitReceiverCPU && dropPct(rcv) >= DeviceDropPct && !sameDevice(res) {
		l.Notes = append(l.Notes, result.Coded(result.NoteReceiverDeviceDrops, map[string]string{"device": rcv.Device}, map[string]float64{"drop_pct": dropPct(rcv)}))
	}
}

// windowBeside names a receive window the user fixed on the receiving
// side (rcv) beside a bound CPU (l) when it held the rate too
// (windowHeld), short of rule 3a's LimitedPct. On this kernel's veth,
// `-S 4K` gives rwnd_limited 45-48% with the receiver's CPU at 100%,
// where another machine saw 71% and 83%; on a third, 6-23% with the
// sender's thread (which runs both ends' packet processing on veth) at
// 89% and the buffer full (InFlightPct 104%); on a busy host, 75-86%
// with other processes taking the CPU the test waited for. One setup,
// one answer: the window the user asked for is named every time.
func windowBeside(t spec.Test, rcv result.Side, l result.Limit) result.Limit {
	tcp := l.Evidence.TCP
	if !windowHeld(t, rcv, tcp) {
		return l
	}
	l.Also = append(l.Also, result.LimitReceiveWindow)
	figs := map[string]float64{"rwnd_limited_pct": tcp.RwndLimitedPct}
	if tcp.InFlightPct > 0 {
		figs["in_flight_pct"] = tcp.InFlightPct
		figs["rcvbuf_bytes"] = float64(tcp.RcvBufBytes)
	}
	l.Notes = append(l.Notes, result.Coded(result.NoteWindowAlsoFull, nil, figs))
	return l
}

// windowHeld is true when a receive window the user fixed on the
// receiving side held the rate: full WindowAlsoPct of the window or
// more, or filled by what was in flight (InFlightPct).
func windowHeld(t spec.Test, rcv result.Side, tcp *result.LimitTCP) bool {
	if tcp == nil || !fixedRcvBuf(t, rcv) {
		return false
	}
	return tcp.RwndLimitedPct >= WindowAlsoPct || tcp.InFlightPct >= InFlightPct
}
