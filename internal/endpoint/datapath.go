package endpoint

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// dataPath applies the spec's data path options to this side's loops
// before they start, and records what the kernel made of each: both the
// client and the server run it for their own side, so the server applies
// the remote half of a spec exactly as the client applies the local one.
// An option the kernel refuses fails the run with a message saying so,
// except MSG_ZEROCOPY, which falls back to copying and says so in the
// record (the spec still names it, so the result shows both).
type dataPath struct {
	cfg *Config
	rec result.DataPath
	// pins maps a CPU to the streams pinned to it, in stream order.
	pins    map[int][]int
	pinList []int // CPUs in the order first used
}

func newDataPath(cfg *Config) *dataPath { return &dataPath{cfg: cfg, pins: map[int][]int{}} }

// cpus is this side's -T list.
func (d *dataPath) cpus() spec.CPUList {
	if d.cfg.Side == result.Local {
		return d.cfg.Spec.LocalCPUs
	}
	return d.cfg.Spec.RemoteCPUs
}

// apply sets the options up on the loop of connection c, the k-th
// (0-based) of this side. It returns the stream's record and the CPU its
// loop must be pinned to, -1 for none.
func (d *dataPath) apply(k int, c Conn, role result.Role, l engine.Loop) (*result.StreamDataPath, int, error) {
	t := d.cfg.Spec
	sdp := &result.StreamDataPath{}
	cpu := -1
	if n, ok := d.cpus().StreamCPU(k); ok {
		if err := engine.CheckCPU(n); err != nil {
			return nil, -1, fmt.Errorf("-T: pin to %w", err)
		}
		cpu = n
		sdp.CPU = &n
		if _, seen := d.pins[n]; !seen {
			d.pinList = append(d.pinList, n)
		}
		d.pins[n] = append(d.pins[n], c.ID)
	}

	switch l := l.(type) {
	case *engine.TCPSender:
		if d.rec.ZeroCopy == "" {
			d.rec.ZeroCopy = t.SendMode()
		}
		switch t.SendMode() {
		case spec.ZeroCopySendfile:
			if err := l.UseSendfile(); err != nil {
				return nil, -1, fmt.Errorf("--zerocopy sendfile: %w", err)
			}
		case spec.ZeroCopyMsg:
			if err := l.UseMsgZeroCopy(); err != nil {
				d.rec.ZeroCopy = spec.ZeroCopyOff
				d.rec.ZeroCopyNote = fmt.Sprintf("--zerocopy msg: the kernel refused MSG_ZEROCOPY (%v); this side sent with write(2), copying", err)
			}
		}
	case *engine.TCPReceiver:
		d.rec.Rx = t.RxMode()
		var err error
		switch t.RxMode() {
		case spec.RxSplice:
			err = l.UseSplice()
		case spec.RxDiscard:
			err = l.UseDiscard()
		}
		if err != nil {
			return nil, -1, fmt.Errorf("--rx %s: %w", t.RxMode(), err)
		}
	case *engine.UDPSender:
		// UDP batches: one send call per datagram unless asked.
		if err := l.SetSendBatch(t.SendsPerCall()); err != nil {
			return nil, -1, fmt.Errorf("--send-batch: %w", err)
		}
		if t.SendBatch > 1 {
			d.rec.SendBatch = t.SendBatch
		}
		if t.GSOSize > 0 {
			if err := l.SetGSO(t.GSOSize); err != nil {
				return nil, -1, fmt.Errorf("--gso %d: %w%s", t.GSOSize, err, needs(err, "UDP GSO (UDP_SEGMENT) needs Linux 4.18"))
			}
			d.rec.GSOSize = t.GSOSize
		}
	case *engine.UDPReceiver:
		if err := l.SetRecvBatch(t.DatagramsPerRecvCall()); err != nil {
			return nil, -1, fmt.Errorf("--recv-batch: %w", err)
		}
		if t.RecvBatch > 1 {
			d.rec.RecvBatch = t.RecvBatch
		}
		if err := l.SetKernelStamps(t.KernelRxStamps()); err != nil {
			return nil, -1, fmt.Errorf("--rx-timestamp: %w", err)
		}
		d.rec.RxTimestamp = spec.RxTimestampClock
		if l.KernelStamps() {
			d.rec.RxTimestamp = spec.RxTimestampKernel
		}
		if t.GRO {
			if err := l.EnableGRO(); err != nil {
				return nil, -1, fmt.Errorf("--gro: %w%s", err, needs(err, "UDP GRO (UDP_GRO) needs Linux 5.0"))
			}
			d.rec.GRO = true
		}
	}

	if t.FQRateBitsPerSecond > 0 && role == result.Sender {
		bps := uint64(max(1, t.FQRateBitsPerSecond/8))
		got, err := engine.SetPacingRate(socketOf(c, l), bps)
		if err != nil {
			return nil, -1, fmt.Errorf("--fq-rate: %w", err)
		}
		sdp.PacingBytesPerSecond = got
		if d.rec.Pacing == nil {
			d.rec.Pacing = d.pacing(c.Conn, got)
		}
		d.rec.Pacing.GrantedBytesPerSecond = min(d.rec.Pacing.GrantedBytesPerSecond, got)
	}

	if t.BusyPollMicros > 0 {
		got, err := d.busyPoll(c, l)
		if err != nil {
			return nil, -1, fmt.Errorf("--busy-poll %d: %w", t.BusyPollMicros, err)
		}
		sdp.BusyPollMicros = got
		if d.rec.BusyPoll == nil {
			d.rec.BusyPoll = &result.BusyPoll{
				AskedMicros:    t.BusyPollMicros,
				GrantedMicros:  got,
				SysctlBusyPoll: d.sysctl("net.core.busy_poll"),
				SysctlBusyRead: d.sysctl("net.core.busy_read"),
			}
		}
		d.rec.BusyPoll.GrantedMicros = min(d.rec.BusyPoll.GrantedMicros, got)
	}
	return sdp, cpu, nil
}

// needs adds advice to an error that says the kernel lacks a feature.
func needs(err error, advice string) string {
	if errors.Is(err, errors.ErrUnsupported) {
		return "; " + advice
	}
	return ""
}

// busyPoll sets SO_BUSY_POLL for connection c and returns what the kernel
// grants. TCP_CRR has no lasting connection: its client sets it on every
// socket it makes (CRROptions), and its server on every one it accepts.
func (d *dataPath) busyPoll(c Conn, l engine.Loop) (int, error) {
	usec := d.cfg.Spec.BusyPollMicros
	switch {
	case c.Conn != nil:
		return engine.SetBusyPoll(socketOf(c, l), usec)
	case d.cfg.CRR != nil:
		return d.cfg.CRR.SetBusyPoll(usec)
	}
	return engine.ProbeBusyPoll(usec)
}

// pacing records what enforces the pacing cap of this side's senders: the
// qdisc on the route to the peer, or TCP's own pacing.
func (d *dataPath) pacing(c net.Conn, granted uint64) *result.Pacing {
	p := &result.Pacing{AskedBitsPerSecond: d.cfg.Spec.FQRateBitsPerSecond, GrantedBytesPerSecond: granted}
	var qerr error
	if peer, err := netip.ParseAddrPort(c.RemoteAddr().String()); err != nil {
		qerr = err
	} else {
		ifname, q, err := sysinfo.Egress(peer.Addr().Unmap())
		p.Interface, qerr = ifname, err
		if q != nil {
			p.Qdisc = q.Kind
		}
	}
	p.HonouredBy, p.Note = pacingVerdict(!d.cfg.Spec.Kind.UDP(), p.Qdisc, d.defaultQdisc(), d.release())
	if qerr != nil {
		p.Note += fmt.Sprintf(" (the qdisc could not be read: %v)", qerr)
	}
	return p
}

// pacingVerdict says what enforces SO_MAX_PACING_RATE for a TCP or UDP
// socket leaving by a root qdisc of kind qdisc ("" when unknown), given
// the system's default qdisc (which an mq root gives each queue) and the
// kernel release. The fq qdisc paces every socket; TCP paces itself when
// it has to since Linux 4.20 (setting the cap turns that on); nothing else
// paces UDP.
func pacingVerdict(tcp bool, qdisc, defaultQdisc, release string) (by, note string) {
	fq := qdisc == "fq" || (qdisc == "mq" && defaultQdisc == "fq")
	switch {
	case fq:
		return "fq", fmt.Sprintf("the %s qdisc paces each socket to its cap", qdisc)
	case tcp && sysinfo.KernelAtLeast(release, 4, 20):
		return "tcp", fmt.Sprintf("TCP's internal pacing enforces the cap (Linux 4.20 and later); the %s qdisc does not pace", orUnknown(qdisc))
	case tcp:
		return "", fmt.Sprintf("before Linux 4.20 (this is %s) TCP honours the cap only through the fq qdisc, and the qdisc is %s", orUnknown(release), orUnknown(qdisc))
	}
	return "", fmt.Sprintf("only the fq qdisc paces UDP, and the qdisc is %s: put fq on the interface (tc qdisc replace dev IFACE root fq)", orUnknown(qdisc))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func (d *dataPath) procRoot() string {
	if d.cfg.ProcRoot != "" {
		return d.cfg.ProcRoot
	}
	return measure.DefaultProcRoot
}

func (d *dataPath) procLine(rel string) string {
	b, err := os.ReadFile(filepath.Join(d.procRoot(), rel))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (d *dataPath) release() string      { return d.procLine("sys/kernel/osrelease") }
func (d *dataPath) defaultQdisc() string { return d.procLine("sys/net/core/default_qdisc") }

// sysctl reads a numeric sysctl, nil when it cannot.
func (d *dataPath) sysctl(name string) *int64 {
	v, err := strconv.ParseInt(d.procLine(filepath.Join("sys", strings.ReplaceAll(name, ".", "/"))), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// finishStream completes stream i's record from its loop's final counters.
func (d *dataPath) finishStream(sdp *result.StreamDataPath, l engine.Loop, end engine.Counters) *result.StreamDataPath {
	if sdp == nil {
		return nil
	}
	if _, ok := l.(*engine.TCPSender); ok && d.rec.ZeroCopy == spec.ZeroCopyMsg {
		sdp.ZeroCopySends = end.Calls
	}
	sdp.ZeroCopyCompleted, sdp.ZeroCopyCopied = end.ZeroCopyCompleted, end.ZeroCopyCopied
	sdp.Coalesced = end.Coalesced
	if sl, ok := l.(engine.SocketLoop); ok && d.cfg.Spec.BusyPollMicros > 0 {
		if id, err := engine.NAPIID(sl); err == nil {
			sdp.NAPIID = id
		}
	}
	if *sdp == (result.StreamDataPath{}) {
		return nil
	}
	return sdp
}

// result is this side's record, from what apply set up and the streams'
// final figures; nil when the spec asks for no data path option.
func (d *dataPath) result(res *result.SideResult) *result.DataPath {
	// A UDP receiver says how it timed arrivals (RxTimestamp) even with
	// no data path option asked: the jitter's meaning depends on it.
	if d.cfg.Spec.DataPathOptions() == nil && d.rec.RxTimestamp == "" {
		return nil
	}
	rec := d.rec
	for _, cpu := range d.pinList {
		rec.PinnedCPUs = append(rec.PinnedCPUs, result.PinnedCPU{CPU: cpu, Streams: d.pins[cpu]})
	}
	rec.AddCPUUtil(res.CPU)
	for _, f := range res.Flows {
		for _, s := range f.Streams {
			if s.DataPath == nil {
				continue
			}
			rec.ZeroCopySends += s.DataPath.ZeroCopySends
			rec.ZeroCopyCompleted += s.DataPath.ZeroCopyCompleted
			rec.ZeroCopyCopied += s.DataPath.ZeroCopyCopied
			rec.Coalesced += s.DataPath.Coalesced
			if rec.BusyPoll != nil && rec.BusyPoll.NAPIID == 0 {
				rec.BusyPoll.NAPIID = s.DataPath.NAPIID
			}
		}
	}
	return &rec
}

// socketOf is what socket options of connection c are set through: the
// loop itself when it took the socket over from the connection.
func socketOf(c Conn, l engine.Loop) engine.Socket {
	if s, ok := l.(engine.Socket); ok {
		return s
	}
	if s, ok := c.Conn.(engine.Socket); ok {
		return s
	}
	return nil
}
