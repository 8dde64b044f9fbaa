package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The data path options change where the copies and the CPU time go, so
// that a user can vary exactly that: which CPUs the data-path threads run
// on, whether payload is copied between the application and the kernel,
// whether the kernel paces a stream, whether a request/response socket
// busy-polls, and whether UDP is segmented and coalesced in the kernel.

// ZeroCopy modes: how a TCP sender hands its payload to the kernel.
const (
	ZeroCopyOff      = "copy"     // write(2): the kernel copies every byte
	ZeroCopySendfile = "sendfile" // sendfile(2) from a memfd holding the payload
	ZeroCopyMsg      = "msg"      // send(2) with MSG_ZEROCOPY, completions from the error queue
)

// Rx modes: how a TCP receiver takes the payload from the kernel.
const (
	RxCopy    = "copy"    // read(2) into a buffer
	RxSplice  = "splice"  // splice(2) into a pipe and on to /dev/null: no copy to user space
	RxDiscard = "discard" // recv(2) with MSG_TRUNC: the kernel drops the bytes without copying
)

// ZeroCopyModes and RxModes list the modes in the order help shows them.
var (
	ZeroCopyModes = []string{ZeroCopyOff, ZeroCopySendfile, ZeroCopyMsg}
	RxModes       = []string{RxCopy, RxSplice, RxDiscard}
)

// Limits of the data path options.
const (
	// MaxCPU bounds a CPU number: the affinity masks wirespeed sets hold
	// 1024 CPUs.
	MaxCPU = 1023
	// MaxBusyPoll is the longest SO_BUSY_POLL accepted, in microseconds.
	MaxBusyPoll = 1000000
	// MaxGSOSegments is how many datagrams one UDP_SEGMENT send may make:
	// the kernel's UDP_MAX_SEGMENTS before Linux 6.10 raised it.
	MaxGSOSegments = 64
	// MinFQRate is the smallest pacing rate, 8 bits (one byte) per second.
	MinFQRate = 8
	// MinRate is the smallest -b: a byte a second, as --fq-rate's. A tiny
	// positive rate is no rate at all and once overflowed the pacers'
	// arithmetic.
	MinRate = 8
	// MaxUDPBatch is the most datagrams one UDP_STREAM system call moves
	// with --send-batch or --recv-batch.
	MaxUDPBatch = 64
)

// tcpStream reports whether the kind is a TCP stream test, the tests the
// zero-copy and receive modes apply to.
func (k Kind) tcpStream() bool { return k == TCPStream || k == TCPMaerts || k == TCPBidir }

// stream reports whether the kind moves a stream of payload one way.
func (k Kind) stream() bool { return k.tcpStream() || k == UDPStream }

// CPUList is one side's -T list: the CPUs its data-path threads are
// pinned to, kept in the text form ParseCPUs reads ("0:1:3", "" for no
// pinning) so that a Test stays comparable with ==. In JSON it is an
// array of numbers.
type CPUList string

// NewCPUList returns the list of cpus.
func NewCPUList(cpus []int) CPUList {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return CPUList(strings.Join(s, ":"))
}

// CPUs returns the numbers of the list; nil for an empty (or malformed)
// list, which Validate refuses.
func (l CPUList) CPUs() []int {
	cpus, err := l.parse()
	if err != nil {
		return nil
	}
	return cpus
}

func (l CPUList) parse() ([]int, error) {
	if l == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(string(l), ":") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CPU number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// StreamCPU returns the CPU the i-th (0-based) data-path thread of a side
// runs on: the list is used in turn, and again from its start when there
// are more streams than CPUs. ok is false for an empty list: no pinning.
func (l CPUList) StreamCPU(i int) (cpu int, ok bool) {
	cpus := l.CPUs()
	if len(cpus) == 0 || i < 0 {
		return 0, false
	}
	return cpus[i%len(cpus)], true
}

// GSOSegments is how many datagrams one send of t makes with UDP_SEGMENT:
// SendSize bytes cut into GSOSize-byte datagrams, the last one shorter
// when it does not divide. 1 without GSO.
func (t Test) GSOSegments() int {
	if t.GSOSize <= 0 {
		return 1
	}
	return (t.SendSize + t.GSOSize - 1) / t.GSOSize
}

// GSOSendSize is the send size for datagrams of gso bytes when none was
// asked: as many whole datagrams as one send may carry, up to the largest
// UDP payload and MaxGSOSegments.
func GSOSendSize(gso int) int {
	if gso <= 0 {
		return DefaultUDPSize
	}
	return max(1, min(MaxGSOSegments, MaxDatagram/gso)) * gso
}

func (t Test) validateDataPath() error {
	for _, side := range []struct {
		name string
		list CPUList
	}{{"local", t.LocalCPUs}, {"remote", t.RemoteCPUs}} {
		cpus, err := side.list.parse()
		if err != nil {
			return fmt.Errorf("%s CPU list %q: %w", side.name, side.list, err)
		}
		if len(cpus) > 2*MaxParallel {
			return fmt.Errorf("%s CPU list has %d entries; at most %d (one per stream)", side.name, len(cpus), 2*MaxParallel)
		}
		for _, c := range cpus {
			if c < 0 || c > MaxCPU {
				return fmt.Errorf("%s CPU %d must be between 0 and %d", side.name, c, MaxCPU)
			}
		}
	}
	switch t.ZeroCopy {
	case "", ZeroCopyOff:
	case ZeroCopySendfile, ZeroCopyMsg:
		if !t.Kind.tcpStream() {
			return fmt.Errorf("--zerocopy %s applies to the TCP stream tests (TCP_STREAM, TCP_MAERTS, TCP_BIDIR), not to %s", t.ZeroCopy, t.Kind)
		}
	default:
		return fmt.Errorf("zero-copy mode %q: use %s", t.ZeroCopy, strings.Join(ZeroCopyModes, ", "))
	}
	switch t.Rx {
	case "", RxCopy:
	case RxSplice, RxDiscard:
		if !t.Kind.tcpStream() {
			return fmt.Errorf("--rx %s applies to the TCP stream tests (TCP_STREAM, TCP_MAERTS, TCP_BIDIR), not to %s", t.Rx, t.Kind)
		}
	default:
		return fmt.Errorf("receive mode %q: use %s", t.Rx, strings.Join(RxModes, ", "))
	}
	switch r := t.FQRateBitsPerSecond; {
	case r < 0 || math.IsNaN(r) || r > 1e13:
		return fmt.Errorf("fq-rate %g bits/s must be between 0 (no cap) and 10T", r)
	case r > 0 && r < MinFQRate:
		return fmt.Errorf("fq-rate %g bits/s is below the kernel's unit of one byte per second", r)
	case r > 0 && !t.Kind.stream():
		return fmt.Errorf("--fq-rate paces the senders of stream tests (TCP_STREAM, TCP_MAERTS, TCP_BIDIR, UDP_STREAM); %s has none", t.Kind)
	}
	switch {
	case t.BusyPollMicros < 0 || t.BusyPollMicros > MaxBusyPoll:
		return fmt.Errorf("busy-poll %d us must be between 0 (off) and %d", t.BusyPollMicros, MaxBusyPoll)
	case t.BusyPollMicros > 0 && !t.Kind.RR():
		return fmt.Errorf("--busy-poll applies to the request/response tests (TCP_RR, UDP_RR, TCP_CRR), not to %s", t.Kind)
	}
	if t.GRO && t.Kind != UDPStream {
		return fmt.Errorf("--gro applies to UDP_STREAM, not to %s", t.Kind)
	}
	if err := t.validateUDPBatch(); err != nil {
		return err
	}
	if err := t.validateRxTimestamp(); err != nil {
		return err
	}
	if t.GSOSize == 0 {
		return nil
	}
	switch segs, tail := t.GSOSegments(), t.SendSize%t.GSOSize; {
	case t.Kind != UDPStream:
		return fmt.Errorf("--gso applies to UDP_STREAM, not to %s", t.Kind)
	case t.GSOSize < MinDatagram || t.GSOSize > MaxDatagram:
		return fmt.Errorf("GSO datagram size %d must be between %d (sequence number and time) and %d bytes", t.GSOSize, MinDatagram, MaxDatagram)
	case t.SendSize < t.GSOSize:
		return fmt.Errorf("with --gso %d each send (-m %d) must hold at least one %d-byte datagram", t.GSOSize, t.SendSize, t.GSOSize)
	case segs > MaxGSOSegments:
		return fmt.Errorf("-m %d makes %d datagrams of %d bytes per send; the kernel takes at most %d: use -m %d or less",
			t.SendSize, segs, t.GSOSize, MaxGSOSegments, MaxGSOSegments*t.GSOSize)
	case tail != 0 && tail < MinDatagram:
		return fmt.Errorf("-m %d leaves a last datagram of %d bytes after %d of %d; it needs %d for its sequence number and time: use -m %d",
			t.SendSize, tail, segs-1, t.GSOSize, MinDatagram, (segs-1)*t.GSOSize)
	}
	return nil
}

// validateUDPBatch checks --send-batch and --recv-batch: how many
// datagrams one sendmmsg or recvmmsg call moves.
func (t Test) validateUDPBatch() error {
	for _, b := range []struct {
		flag string
		n    int
	}{{"--send-batch", t.SendBatch}, {"--recv-batch", t.RecvBatch}} {
		switch {
		case b.n < 0 || b.n > MaxUDPBatch:
			return fmt.Errorf("%s %d must be between 1 (one datagram per system call) and %d", b.flag, b.n, MaxUDPBatch)
		case b.n > 1 && t.Kind != UDPStream:
			return fmt.Errorf("%s applies to UDP_STREAM, not to %s", b.flag, t.Kind)
		}
	}
	return nil
}

// How a UDP_STREAM receiver times each datagram's arrival, the time its
// jitter is taken from (--rx-timestamp):
//
//   - RxTimestampClock: the receiving process's clock, read once per
//     receive call as the call returns with the datagram, as iperf3's
//     receiver times them. The time includes any wait in the socket's
//     receive queue and the receiver's wake-up. The receive call is
//     recvfrom(2), and the kernel stamps nothing: the cheapest per
//     datagram, and the default with one datagram per call.
//   - RxTimestampKernel: the kernel's receive timestamp (SO_TIMESTAMPNS),
//     taken as the datagram entered the host's receive path, whenever the
//     receiver reads it: the path's jitter without the receiver's own
//     scheduling, at the cost of a recvmsg(2) with a control message per
//     datagram and a clock read per packet in the kernel's receive path.
//     Needed, and the default, where one call takes several datagrams
//     (--recv-batch, --gro).
const (
	RxTimestampClock  = "clock"
	RxTimestampKernel = "kernel"
)

// KernelRxStamps reports whether a UDP_STREAM receiver of t times its
// datagrams by the kernel's stamps: everything but RxTimestampClock.
func (t Test) KernelRxStamps() bool { return t.RxTimestamp != RxTimestampClock }

// validateRxTimestamp checks --rx-timestamp.
func (t Test) validateRxTimestamp() error {
	switch t.RxTimestamp {
	case "":
		return nil
	case RxTimestampClock, RxTimestampKernel:
	default:
		return fmt.Errorf("--rx-timestamp %q: use %s (the receiver's clock per call) or %s (the kernel's stamp per datagram)", t.RxTimestamp, RxTimestampClock, RxTimestampKernel)
	}
	switch {
	case t.Kind != UDPStream:
		return fmt.Errorf("--rx-timestamp applies to UDP_STREAM, not to %s", t.Kind)
	case t.RxTimestamp == RxTimestampClock && (t.RecvBatch > 1 || t.GRO):
		return fmt.Errorf("--rx-timestamp %s times a receive call, and with --recv-batch or --gro a call takes several datagrams: their arrival times need --rx-timestamp %s", RxTimestampClock, RxTimestampKernel)
	}
	return nil
}

// SendsPerCall is how many sends a UDP_STREAM sender of t makes per
// system call: 1 unless --send-batch asks for more.
func (t Test) SendsPerCall() int { return max(1, t.SendBatch) }

// DatagramsPerRecvCall is how many datagrams a UDP_STREAM receiver of t
// takes per system call at most: 1 unless --recv-batch asks for more.
func (t Test) DatagramsPerRecvCall() int { return max(1, t.RecvBatch) }

// ParseCPUs reads -T LOCAL[,REMOTE]: each side a CPU number or a list of
// them separated by ':', with a-b ranges ("0", "0:2", "0-3", "0-1:4").
// Stream k of a side runs on the k-th CPU of its list, cycling (see
// StreamCPU). A side left empty is not pinned: "-T 1" pins the client's
// threads only, "-T ,1" the server's only.
func ParseCPUs(s string) (local, remote CPUList, err error) {
	l, r, two := strings.Cut(s, ",")
	if strings.Contains(r, ",") {
		return "", "", fmt.Errorf("-T %q: write LOCAL[,REMOTE], each a CPU or a list like 0:1 or 0-3", s)
	}
	lc, err := parseCPUList(l)
	if err != nil {
		return "", "", fmt.Errorf("-T %q: local: %w", s, err)
	}
	var rc []int
	if two {
		if rc, err = parseCPUList(r); err != nil {
			return "", "", fmt.Errorf("-T %q: remote: %w", s, err)
		}
	}
	if lc == nil && rc == nil {
		return "", "", fmt.Errorf("-T %q names no CPU", s)
	}
	return NewCPUList(lc), NewCPUList(rc), nil
}

func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ":") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("range %s runs backwards", part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
			if len(out) > 2*MaxParallel {
				return nil, fmt.Errorf("more than %d CPUs", 2*MaxParallel)
			}
		}
	}
	return out, nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > MaxCPU {
		return 0, fmt.Errorf("%q is not a CPU number (0 to %d)", s, MaxCPU)
	}
	return n, nil
}

// SendMode is the zero-copy mode of t's TCP senders: ZeroCopyOff for a
// spec that names none (one written before the option existed).
func (t Test) SendMode() string {
	if t.ZeroCopy == "" {
		return ZeroCopyOff
	}
	return t.ZeroCopy
}

// RxMode is the receive mode of t's TCP receivers, RxCopy when none is
// named.
func (t Test) RxMode() string {
	if t.Rx == "" {
		return RxCopy
	}
	return t.Rx
}

// DataPathOptions lists the data path options t asks for, as the flags
// that ask for them ("--zerocopy msg"), in the order of the flags; nil
// when it asks for none.
func (t Test) DataPathOptions() []string {
	var o []string
	if t.LocalCPUs != "" || t.RemoteCPUs != "" {
		s := "-T " + string(t.LocalCPUs)
		if t.RemoteCPUs != "" {
			s += "," + string(t.RemoteCPUs)
		}
		o = append(o, s)
	}
	if m := t.SendMode(); m != ZeroCopyOff {
		o = append(o, "--zerocopy "+m)
	}
	if m := t.RxMode(); m != RxCopy {
		o = append(o, "--rx "+m)
	}
	if t.FQRateBitsPerSecond > 0 {
		o = append(o, "--fq-rate "+strconv.FormatFloat(t.FQRateBitsPerSecond, 'g', -1, 64))
	}
	if t.BusyPollMicros > 0 {
		o = append(o, "--busy-poll "+strconv.Itoa(t.BusyPollMicros))
	}
	if t.GSOSize > 0 {
		o = append(o, "--gso "+strconv.Itoa(t.GSOSize))
	}
	if t.GRO {
		o = append(o, "--gro")
	}
	// UDP batches.
	if t.SendBatch > 1 {
		o = append(o, "--send-batch "+strconv.Itoa(t.SendBatch))
	}
	if t.RecvBatch > 1 {
		o = append(o, "--recv-batch "+strconv.Itoa(t.RecvBatch))
	}
	// The kernel's stamps with one datagram per call are the choice that
	// is not the default (Resolve); "" is an older peer's, kernel too.
	if t.RxTimestamp == RxTimestampKernel && t.RecvBatch <= 1 && !t.GRO {
		o = append(o, "--rx-timestamp "+RxTimestampKernel)
	}
	return o
}
