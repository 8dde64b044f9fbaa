package engine

import (
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record nanoseconds from 1 ns to an hour with three
// significant digits: any recorded value is within 0.1% of the true one.
const (
	latencyMax     = int64(time.Hour)
	latencySigFigs = 3
)

// NewLatencyHistogram returns an empty histogram of the kind the
// request/response loops record into.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, latencyMax, latencySigFigs)
}

// udpRRTimeout is how long a UDP request/response client waits for an
// answer before it counts the transaction as timed out and sends the next
// request; pollInterval is how often a blocked exchange wakes up to look at
// the stop flag.
const (
	udpRRTimeout = time.Second
	pollInterval = 50 * time.Millisecond
)

// The first bytes of a UDP request carry its sequence number (as many of
// its 8 big-endian bytes as the request holds) and the response echoes
// them, so a late answer is never taken for the current one.
func echoLen(req, resp int) int { return min(req, resp, 8) }

func putSeq(b []byte, seq uint64, n int) {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	copy(b[:n], s[8-n:])
}

func getSeq(b []byte, n int) uint64 {
	var s [8]byte
	copy(s[8-n:], b[:n])
	return binary.BigEndian.Uint64(s[:])
}

// RRClient makes request/response transactions on one connection (TCP or
// connected UDP), with burst transactions in flight, and records the
// latency of each.
type RRClient struct {
	base
	rrSocket
	req, resp int
	burst     int
	hist      *hdrhistogram.Histogram
	recording atomic.Bool
	pace      *pacer // nil: send at once (SetMaxRate)
}

// NewRRClient returns the client loop for c (a *net.TCPConn or a
// connected *net.UDPConn).
func NewRRClient(c net.Conn, req, resp, burst int) (*RRClient, error) {
	if req < 1 || resp < 1 || burst < 1 {
		return nil, fmt.Errorf("request %d, response %d and burst %d must be at least 1", req, resp, burst)
	}
	sock, wake, err := newRRSocket(c)
	if err != nil {
		return nil, err
	}
	return &RRClient{base: newBase(wake), rrSocket: sock, req: req, resp: resp, burst: burst, hist: NewLatencyHistogram()}, nil
}

// Run makes transactions until Stop or a failure. Counters.Packets counts
// completed transactions.
func (r *RRClient) Run() error {
	err := r.exchange()
	if r.stopped() {
		return nil
	}
	if r.udp {
		err = tooBigRC(r.rc, r.req, err)
	}
	return err
}

// LatencyLoop is a loop that times its transactions (RRClient,
// CRRClient): it records their latencies from MarkWindow to EndWindow.
type LatencyLoop interface {
	Loop
	WindowMarker
	// EndWindow stops recording.
	EndWindow()
	// Latency returns the latencies recorded; call after Run returned.
	Latency() *hdrhistogram.Histogram
}

// MarkWindow starts recording latencies; EndWindow stops.
func (r *RRClient) MarkWindow() { r.recording.Store(true) }

// EndWindow stops recording latencies.
func (r *RRClient) EndWindow() { r.recording.Store(false) }

// Latency returns the latencies recorded inside the window; call after
// Run returned.
func (r *RRClient) Latency() *hdrhistogram.Histogram { return r.hist }

// Finish tells the server the client is done: end of stream on TCP, empty
// datagrams on UDP.
func (r *RRClient) Finish() error { return finishRR(r.rc, r.udp) }

// done records one completed transaction that started at start (ns on
// the loop's clock) and ended at end.
func (r *RRClient) done(start, end int64) {
	r.ctr.packets.Add(1)
	if r.recording.Load() {
		r.hist.RecordValue(max(end-start, 1))
	}
}

// inflight is the ring of outstanding requests of a burst: sequence
// number and send time, oldest first.
type inflight struct {
	seq  []uint64
	at   []int64
	head int
	n    int
}

func newInflight(n int) *inflight { return &inflight{seq: make([]uint64, n), at: make([]int64, n)} }

func (f *inflight) push(seq uint64, at int64) {
	i := (f.head + f.n) % len(f.seq)
	f.seq[i], f.at[i] = seq, at
	f.n++
}

func (f *inflight) pop() (uint64, int64) {
	s, a := f.seq[f.head], f.at[f.head]
	f.head = (f.head + 1) % len(f.seq)
	f.n--
	return s, a
}

// take removes the request whose echoed sequence bits equal echo and
// returns its send time; false when none is outstanding (a late answer to
// a request already given up).
func (f *inflight) take(echo uint64, n int) (int64, bool) {
	mask := ^uint64(0)
	if n < 8 {
		mask = 1<<(8*n) - 1
	}
	for k := 0; k < f.n; k++ {
		i := (f.head + k) % len(f.seq)
		if f.seq[i]&mask != echo {
			continue
		}
		at := f.at[i]
		// Everything sent before it is overtaken: keep FIFO order by
		// moving the matched entry to the head, then popping it.
		f.seq[i], f.seq[f.head] = f.seq[f.head], f.seq[i]
		f.at[i], f.at[f.head] = f.at[f.head], f.at[i]
		f.pop()
		return at, true
	}
	return 0, false
}

// RRServer answers requests on one connection: a response of resp bytes
// for every request of req bytes (TCP) or every datagram (UDP), until the
// client's end of stream.
type RRServer struct {
	base
	follow
	rrSocket
	req, resp int
	pace      *pacer // nil: answer at once (SetMaxRate)
}

// NewRRServer returns the server loop for c.
func NewRRServer(c net.Conn, req, resp int) (*RRServer, error) {
	sock, wake, err := newRRSocket(c)
	if err != nil {
		return nil, err
	}
	return &RRServer{base: newBase(wake), follow: newFollow(), rrSocket: sock, req: req, resp: resp}, nil
}

// Run answers until the client's end of stream, Stop or a failure.
// Counters.Packets counts answered requests.
func (r *RRServer) Run() error {
	err := r.answer()
	if r.stopped() || r.Ended() {
		return nil
	}
	if r.udp {
		err = tooBigRC(r.rc, r.resp, err)
	}
	return err
}

// answered counts one transaction.
func (r *RRServer) answered() {
	r.ctr.packets.Add(1)
}

// Ended reports whether the server saw the client's end.
func (r *RRServer) Ended() bool { return r.ended.Load() }

// rrSocket is the socket of a request/response loop. On Linux the loop
// owns a duplicate of it outside Go's poller (see detach) and conn is nil;
// elsewhere it is the connection itself.
type rrSocket struct {
	conn net.Conn
	file closer // the detached socket, when there is one
	rc   syscall.RawConn
	udp  bool
}

// newRRSocket takes the socket of c for a loop, and returns the function
// that wakes a loop parked on it (nil when the loop polls on its own).
func newRRSocket(c net.Conn) (rrSocket, func(), error) {
	rcc, ok := c.(rawConn)
	if !ok {
		return rrSocket{}, nil, fmt.Errorf("data connection %T has no raw socket", c)
	}
	rc, err := rcc.SyscallConn()
	if err != nil {
		return rrSocket{}, nil, fmt.Errorf("data connection: %w", err)
	}
	_, udp := c.(*net.UDPConn)
	f, frc, err := detach(c, rc)
	if err != nil {
		return rrSocket{}, nil, err
	}
	if f != nil {
		c.Close() // the duplicate is the loop's socket from here
		return rrSocket{file: f, rc: frc, udp: udp}, nil, nil
	}
	return rrSocket{conn: c, rc: rc, udp: udp}, wakeConn(c), nil
}

// SyscallConn gives access to the loop's own socket, for socket options.
func (r *rrSocket) SyscallConn() (syscall.RawConn, error) { return r.rc, nil }

// Close closes the socket.
func (r *rrSocket) Close() error {
	if r.file != nil {
		return r.file.Close()
	}
	return r.conn.Close()
}

// Info reads the socket's buffer sizes (and congestion control on TCP).
func (r *rrSocket) Info() (SocketInfo, error) { return rawInfo(r.rc, !r.udp) }

// closer is what a detached socket needs at the end.
type closer interface{ Close() error }

var procsMu sync.Mutex

// AddProcs raises GOMAXPROCS by n for loops that hold a P for their whole
// run, and returns the function that lowers it again. Safe to call from
// several runs at once (the client and the server in one process).
func AddProcs(n int) func() {
	procsMu.Lock()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
	procsMu.Unlock()
	return func() {
		procsMu.Lock()
		runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)-n))
		procsMu.Unlock()
	}
}

// rrCounters is a request/response loop's counters with Bytes derived
// from the transactions, so that a sample never sees a transaction
// counted without its bytes or the other way round.
func rrCounters(ctr *counters, req, resp int) Counters {
	c := ctr.snapshot()
	c.Bytes = c.Packets * int64(req+resp)
	return c
}

// Counters reads the counters; Bytes is request plus response bytes of
// the completed transactions.
func (r *RRClient) Counters() Counters { return rrCounters(&r.ctr, r.req, r.resp) }

// Counters reads the counters; Bytes is request plus response bytes of
// the answered requests.
func (r *RRServer) Counters() Counters { return rrCounters(&r.ctr, r.req, r.resp) }

// Counters reads the counters; Bytes is request plus response bytes of
// the completed transactions.
func (c *CRRClient) Counters() Counters { return rrCounters(&c.ctr, c.req, c.resp) }

// Counters reads the counters; Bytes is request plus response bytes of
// the answered connections.
func (s *CRRServer) Counters() Counters { return rrCounters(&s.ctr, s.req, s.resp) }

// KeptSocket is a duplicate of a socket (see Keep).
type KeptSocket interface {
	syscall.Conn
	Close() error
}

// Keep returns a duplicate of c's socket that keeps it open after c (or
// the loop that took it over) is closed; on Linux outside Go's poller.
func Keep(c net.Conn) (KeptSocket, error) { return keep(c) }
