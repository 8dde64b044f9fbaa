// Package engine owns the data path: it opens and configures data sockets
// and runs the hot loops that move payload and count it. It does not
// print, format or allocate per message; the caller samples the counters
// and decides when to stop.
//
// Every loop implements Loop (Run, Stop, Counters); what only some loops
// do are optional interfaces declared beside them (Finisher, Follower,
// SocketLoop, WindowMarker, LatencyLoop, UDPWindowLoop), which a caller
// type-asserts.
//
// The Linux loops are written by hand because no library offers loops
// this lean. They work as netperf's and iperf's threads do: each takes
// its socket out of Go's poller (a dup(2) of the descriptor; the
// connection is closed), locks its OS thread and makes raw system calls
// that block in the kernel, with a socket timeout of pollInterval to look
// at its stop flag. Through Go's poller and scheduler, every time a
// socket had to wait the loop parked and was woken, and those wake-ups
// cost a fifth of TCP throughput, two thirds of UDP's and half of the
// transaction rate on two cores. TCP streams make one write(2) or read(2)
// per message (tcp_linux.go; sendto(2) and recvfrom(2), as netperf
// calls), UDP streams one write(2) per datagram and one recvmsg(2) per
// datagram, or batches of them when asked (SetSendBatch, SetRecvBatch;
// udp_linux.go), request/response loops make a blocking exchange
// (rr_linux.go), TCP_CRR a connection per transaction from raw socket(2),
// connect(2) and accept4(2) on a listener that is out of the poller too
// (crr_linux.go). The stream and request/response loops run on a thread
// of their own whose file table is a private copy (ownfiles_linux.go), so
// that the kernel handles their descriptor as a single-threaded process's,
// without a reference taken and dropped on the file per call.
// A run adds a P per loop (AddProcs), so
// the rest of the process keeps its own. A raw call does not give the P
// up while it blocks: a call comes back on every timeout or signal (which
// may be the runtime asking for the P to stop the world), and the loop
// then reaches a preemption point; the TCP_CRR loops, whose retry paths
// call only raw stubs, yield explicitly (runtime.Gosched). A TCP stream
// receiver whose waits are long blocks through the scheduler instead,
// after a raw attempt that found nothing queued (rawReadNow, waitRead in
// rr_linux.go; receiveCopy): a raw block is preempted with a signal every
// 10 ms, which a slow stream pays in full. The data path options
// (datapath.go) swap in other system calls for the same loops: sendfile
// and MSG_ZEROCOPY sends, splice and MSG_TRUNC receives (these four keep
// the poller), UDP GSO and GRO, pacing, busy polling and CPU pinning.
//
// Other platforms move data through net.Conn and refuse the data path
// options, all in engine_other.go, the one non-Linux file: every exported
// name is declared once, in a portable file, and calls a private function
// of the platform. What the platform or the kernel lacks is
// ErrUnsupported, which wraps errors.ErrUnsupported.
package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"wirespeed/internal/spec"
)

// ErrUnsupported is what the platform or the kernel cannot do. It wraps
// errors.ErrUnsupported, which callers can test for instead.
var ErrUnsupported = fmt.Errorf("%w on this platform", errors.ErrUnsupported)

// Loop is one data connection's hot loop and its counters: what every
// loop has. What only some loops do is in the optional interfaces below
// (Finisher, Follower, SocketLoop, WindowMarker) and beside the loops
// that implement them (LatencyLoop in rr.go, UDPWindowLoop in udp.go);
// a caller type-asserts them.
type Loop interface {
	// Run moves data until Stop, the peer's end of stream, or a failure.
	// It returns nil when stopped or when the peer ended.
	Run() error
	// Stop makes Run return promptly, also when it waits for the socket.
	// Safe to call more than once, from any goroutine.
	Stop()
	// Counters reads the counters; safe from any goroutine while Run runs.
	Counters() Counters
}

// Finisher is an active loop, one that decides when data ends: a sender
// (TCPSender, UDPSender) or a request/response client (RRClient,
// CRRClient).
type Finisher interface {
	Loop
	// Finish tells the peer this side is done, after Run returned.
	Finish() error
}

// Follower is a passive loop, one whose peer decides when data starts and
// ends: a receiver (TCPReceiver, UDPReceiver) or a request/response
// server (RRServer, CRRServer).
type Follower interface {
	Loop
	// FirstByte is closed when the loop gets its first data.
	FirstByte() <-chan struct{}
	// FirstByteAt is when that happened (monotonic); valid once FirstByte
	// is closed.
	FirstByteAt() time.Time
	// Ended reports whether the loop saw the peer's end of stream.
	Ended() bool
}

// EndTimer is a loop that can say when it saw its peer's end of stream:
// every stream receiver (TCPReceiver, UDPReceiver, and the request/response
// loops; not TCP_CRR's server, whose end is its test's).
type EndTimer interface {
	EndedAt() time.Time
}

// SocketLoop is a loop with a lasting socket of its own: every loop but
// TCP_CRR's, which make a connection per transaction. The socket may be
// the loop's duplicate of its connection's rather than the connection's
// (on Linux the loops take it out of Go's poller).
type SocketLoop interface {
	Loop
	// SyscallConn gives the socket now in use: for socket options, and
	// for TCP_INFO on a TCP loop.
	Socket
	// Info reads what the kernel granted the socket now.
	Info() (SocketInfo, error)
	// Close closes the socket.
	Close() error
}

// WindowMarker is a loop that keeps figures of the measurement window
// apart from the rest of its run (UDPReceiver, RRClient, CRRClient).
type WindowMarker interface {
	// MarkWindow tells the loop the window opens now.
	MarkWindow()
}

// The loops and the optional interfaces each implements.
var (
	_ interface {
		Finisher
		SocketLoop
	} = (*TCPSender)(nil)
	_ interface {
		Follower
		EndTimer
		SocketLoop
	} = (*TCPReceiver)(nil)
	_ interface {
		Finisher
		SocketLoop
	} = (*UDPSender)(nil)
	_ interface {
		Follower
		EndTimer
		SocketLoop
		UDPWindowLoop
	} = (*UDPReceiver)(nil)
	_ interface {
		Finisher
		SocketLoop
		LatencyLoop
	} = (*RRClient)(nil)
	_ interface {
		Follower
		EndTimer
		SocketLoop
	} = (*RRServer)(nil)
	_ interface {
		Finisher
		LatencyLoop
	} = (*CRRClient)(nil)
	_ Follower = (*CRRServer)(nil)
)

// Counters is a snapshot of a loop's counters. Each loop fills the ones
// that apply to it.
type Counters struct {
	Bytes int64 // payload bytes moved
	Calls int64 // system calls that moved data
	// Packets is datagrams sent or received (unique) for UDP streams, and
	// completed transactions for request/response loops.
	Packets    int64
	SendErrors int64 // sends refused by the kernel (EAGAIN, ENOBUFS, ECONNREFUSED), counted, then retried
	Lost       int64 // datagrams missing from the sequence so far (late ones are given back)
	OutOfOrder int64 // datagrams that arrived after a later one
	Duplicates int64 // datagrams seen twice
	Timeouts   int64 // request/response transactions given up after no answer
	// JitterNanos is the RFC 3550 interarrival jitter estimate.
	JitterNanos float64

	// ZeroCopyCompleted is how many MSG_ZEROCOPY sends the kernel reported
	// done with (TCPSender.UseMsgZeroCopy), and ZeroCopyCopied how many of
	// those it had copied after all.
	ZeroCopyCompleted int64
	ZeroCopyCopied    int64
	// Coalesced is how many receive buffers held several datagrams that
	// UDP_GRO joined (UDPReceiver.EnableGRO).
	Coalesced int64
}

// counters are a loop's atomic counters. Padding keeps them off the cache
// lines of fields other goroutines write.
type counters struct {
	_          [64]byte
	bytes      atomic.Int64
	calls      atomic.Int64
	packets    atomic.Int64
	sendErrors atomic.Int64
	lost       atomic.Int64
	ooo        atomic.Int64
	dup        atomic.Int64
	timeouts   atomic.Int64
	jitter     atomic.Uint64 // float64 bits
	zcDone     atomic.Int64
	zcCopied   atomic.Int64
	coalesced  atomic.Int64
	_          [64]byte
}

func (c *counters) snapshot() Counters {
	return Counters{
		Bytes:       c.bytes.Load(),
		Calls:       c.calls.Load(),
		Packets:     c.packets.Load(),
		SendErrors:  c.sendErrors.Load(),
		Lost:        c.lost.Load(),
		OutOfOrder:  c.ooo.Load(),
		Duplicates:  c.dup.Load(),
		Timeouts:    c.timeouts.Load(),
		JitterNanos: math.Float64frombits(c.jitter.Load()),

		ZeroCopyCompleted: c.zcDone.Load(),
		ZeroCopyCopied:    c.zcCopied.Load(),
		Coalesced:         c.coalesced.Load(),
	}
}

// base is what every loop shares: counters, the stop flag, and whether
// the loop saw its peer's end of stream.
type base struct {
	ctr      counters
	stop     atomic.Bool
	stopOnce sync.Once
	stopCh   chan struct{}
	ended    atomic.Bool
	endedAt  time.Time // written once before ended is set (markEnded)
	wake     func()    // wakes a loop parked in the poller
	// timer is the pacing sleep's, made at the first sleep and reset for
	// each after, so that a paced loop allocates nothing per sleep; only
	// the loop's own goroutine sleeps.
	timer *time.Timer
}

func newBase(wake func()) base {
	return base{stopCh: make(chan struct{}), wake: wake}
}

func (b *base) Counters() Counters { return b.ctr.snapshot() }
func (b *base) stopped() bool      { return b.stop.Load() }

// markEnded notes that the loop saw its peer's end of stream, and when.
func (b *base) markEnded() {
	b.endedAt = time.Now()
	b.ended.Store(true)
}

// EndedAt is when the loop saw its peer's end of stream (monotonic); the
// zero time until it did.
func (b *base) EndedAt() time.Time {
	if !b.ended.Load() {
		return time.Time{}
	}
	return b.endedAt
}

// sleepUntil waits until t or until Stop; false when stopped. Go's timers
// (1.23 on) drop a stale expiry on Reset and Stop, so one timer serves
// every sleep.
func (b *base) sleepUntil(t time.Time) (ok bool) {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	if b.timer == nil {
		b.timer = time.NewTimer(d)
	} else {
		b.timer.Reset(d)
	}
	select {
	case <-b.timer.C:
		return true
	case <-b.stopCh:
		b.timer.Stop()
		return false
	}
}

func (b *base) Stop() {
	b.stop.Store(true)
	b.stopOnce.Do(func() { close(b.stopCh) })
	if b.wake != nil {
		b.wake()
	}
}

// follow is what a Follower adds to base: when its first data came.
type follow struct {
	firstOnce sync.Once
	first     chan struct{}
	firstAt   time.Time // written once before first is closed
}

func newFollow() follow { return follow{first: make(chan struct{})} }

func (f *follow) FirstByte() <-chan struct{} { return f.first }
func (f *follow) FirstByteAt() time.Time     { return f.firstAt }
func (f *follow) markFirst()                 { f.firstOnce.Do(f.setFirst) }
func (f *follow) setFirst()                  { f.firstAt = time.Now(); close(f.first) }

// sleepUntil waits until t or until stop is closed; false when stopped.
func sleepUntil(t time.Time, stop <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-stop:
		return false
	}
}

// wakeConn returns a function that wakes a loop parked on c: a deadline in
// the past.
func wakeConn(c net.Conn) func() {
	return func() { c.SetDeadline(time.Unix(1, 0)) }
}

// isTimeout reports whether err is the deadline Stop set.
func isTimeout(err error) bool { return err != nil && os.IsTimeout(err) }

// Payload is the data a sender writes: a ring of content plus a copy of its
// head after the end, so that any offset in the ring starts a contiguous
// message of up to max bytes.
type Payload struct {
	buf  []byte
	ring int // offsets wrap at ring
	max  int // largest message it serves
}

// minRandomRing is the shortest a random payload's ring gets: the windows
// of the stream compressors a path may hold (deflate 32 KiB, LZO 48 KiB,
// LZ4 and Snappy 64 KiB) and the largest TSO/GSO segment (64 KiB), so
// that neither a packet nor a compression window ever sees repeated
// bytes. Messages of up to a quarter of it copy from a ring of that
// length. Larger messages copy from a ring of ringStep more, whatever
// their size: the ring's length is what a compressor would need to see a
// repeat, and its bytes are what the sender's copy keeps in its caches.
// Four messages of up to 256 KiB, as the ring once was, made the
// sender's copy at 64 KiB read 320 KiB where netperf's two buffers are
// 128 KiB, and cost it some 15% more CPU per call than one hot buffer
// (bench/README.md, "The payload ring"); no common compressor's window
// lies between 68 and 256 KiB, so the longer ring bought nothing.
const (
	minRandomRing = 64 << 10
	ringStep      = 4 << 10
)

// ringFor is the length of a random payload's ring for messages of up to
// size bytes: minRandomRing up to a quarter of it, then minRandomRing +
// ringStep, one more step when size is a whole number of rings (so that
// consecutive messages never start at the same byte).
func ringFor(size int) int {
	if size <= minRandomRing/4 {
		return minRandomRing
	}
	ring := minRandomRing + ringStep
	if size%ring == 0 {
		ring += ringStep
	}
	return ring
}

// hotRing bounds the ring of a hot payload (spec.PayloadHot): three
// messages of up to 8 KiB (netperf's send_width at 8 KiB), one message
// of more. With the copy of the head that follows it, it stays within a
// first-level data cache of 32 KiB or more, where the kernel's copy from
// it costs the sender some 40% less per byte than from the 64 KiB ring
// of a random payload (bench/README.md, "The payload ring"); a
// compressor on the path whose window is longer than the ring sees its
// repeats.
const hotRing = 24 << 10

// hotRingFor is the length of a hot payload's ring for messages of up to
// size bytes: three messages, at most hotRing, at least one message.
func hotRingFor(size int) int { return max(size, min(3*size, hotRing)) }

// NewPayload builds the payload for messages of up to max bytes. kind is a
// spec payload kind; content is the file's bytes for spec.PayloadFile.
func NewPayload(kind string, content []byte, max int) (*Payload, error) {
	if max < 1 {
		return nil, fmt.Errorf("message size %d must be at least 1", max)
	}
	var src []byte
	switch kind {
	case spec.PayloadRandom, spec.PayloadHot:
		n := ringFor(max)
		if kind == spec.PayloadHot {
			n = hotRingFor(max)
		}
		src = make([]byte, n)
		rand.Read(src) // never fails (crypto/rand contract since Go 1.24)
	case spec.PayloadZeros:
		src = make([]byte, max)
	case spec.PayloadFile:
		if len(content) == 0 {
			return nil, fmt.Errorf("payload file is empty")
		}
		src = content
	default:
		return nil, fmt.Errorf("unknown payload %q", kind)
	}
	buf := make([]byte, len(src)+max)
	for off := 0; off < len(buf); off += copy(buf[off:], src) {
	}
	return &Payload{buf: buf, ring: len(src), max: max}, nil
}

// at returns size bytes of payload starting at offset off of the ring.
func (p *Payload) at(off, size int) []byte { return p.buf[off : off+size] }

// Options are the socket settings of data connections.
type Options struct {
	SockBuf           int    // SO_SNDBUF and SO_RCVBUF; 0 leaves the system default
	CongestionControl string // TCP_CONGESTION; "" leaves the system default (TCP only)
	NoDelay           bool   // TCP_NODELAY (TCP only)
	// BusyPollMicros is SO_BUSY_POLL; 0 leaves the system default
	// (net.core.busy_read). For TCP_CRR, whose sockets are made per
	// transaction.
	BusyPollMicros int

	// Socket options (sockopts.go): -B, --bind-dev, --cport, --tos, --mss, --dont-fragment.
	LocalAddr    netip.Addr // bind to this address before connecting; the zero Addr for any
	LocalPort    int        // bind to this port, with SO_REUSEADDR; 0 for an ephemeral one
	BindDev      string     // SO_BINDTODEVICE; "" for none
	TOS          int        // IP_TOS, IPV6_TCLASS on IPv6 sockets; 0 leaves the default
	MSS          int        // TCP_MAXSEG, before connect or listen (TCP only); 0 for the default
	DontFragment bool       // IP_PMTUDISC_DO, IPV6_DONTFRAG on IPv6 sockets (UDP only)
	// MPTCP makes a dialed TCP data connection Multipath TCP (--mptcp,
	// mptcp.go); the server's listener for such connections is ListenMPTCP.
	MPTCP bool
}

// SocketInfo is what the kernel granted a data socket.
type SocketInfo struct {
	SndBuf            int
	RcvBuf            int
	CongestionControl string
}

// rawConn is the part of net.Conn the loops need.
type rawConn interface {
	net.Conn
	SyscallConn() (syscall.RawConn, error)
}

// rawInfo reads socket buffer sizes, and for TCP the congestion control,
// through rc.
func rawInfo(rc syscall.RawConn, tcp bool) (SocketInfo, error) {
	var si SocketInfo
	var gerr error
	err := rc.Control(func(fd uintptr) {
		if tcp {
			si, gerr = sockInfo(fd)
		} else {
			si, gerr = bufInfo(fd)
		}
	})
	if err != nil {
		return SocketInfo{}, err
	}
	return si, gerr
}
