package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// crrConnectTimeout bounds one TCP_CRR connect.
const crrConnectTimeout = time.Second

// CRRClient makes TCP_CRR transactions: for each, a new connection, a
// request, the response, the server's close, and the client's close. It
// records the latency of the whole transaction, connect included.
type CRRClient struct {
	base
	network, addr string
	opts          Options
	req, resp     int
	hist          *hdrhistogram.Histogram
	recording     atomic.Bool
}

// NewCRRClient returns the TCP_CRR client loop toward addr.
func NewCRRClient(network, addr string, opts Options, req, resp int) (*CRRClient, error) {
	if req < 1 || resp < 1 {
		return nil, fmt.Errorf("request %d and response %d must be at least 1", req, resp)
	}
	return &CRRClient{base: newBase(nil), network: network, addr: addr, opts: opts, req: req, resp: resp, hist: NewLatencyHistogram()}, nil
}

// Run makes transactions until Stop or a failure. Counters.Packets counts
// completed transactions, Counters.Timeouts connects that timed out.
func (c *CRRClient) Run() error {
	err := c.loop()
	if c.stopped() {
		return nil
	}
	return err
}

// MarkWindow starts recording latencies.
func (c *CRRClient) MarkWindow() { c.recording.Store(true) }

// EndWindow stops recording latencies.
func (c *CRRClient) EndWindow() { c.recording.Store(false) }

// Latency returns the latencies recorded inside the window; call after
// Run returned.
func (c *CRRClient) Latency() *hdrhistogram.Histogram { return c.hist }

func (c *CRRClient) done(start, end int64) {
	c.ctr.packets.Add(1)
	if c.recording.Load() {
		c.hist.RecordValue(max(end-start, 1))
	}
}

// Finish tells the server the test is over: a connection closed before
// any request.
func (c *CRRClient) Finish() error {
	// The same options as the transactions' sockets: it is the test's
	// last connection to the test's listener.
	d := net.Dialer{Timeout: crrConnectTimeout, LocalAddr: localAddr(c.network, c.opts), Control: controlOpts(c.opts)}
	conn, err := d.Dial(c.network, c.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// CRRShared is what the server loops of one TCP_CRR test share: the
// listener, the only peer address they serve, and the end of the test.
type CRRShared struct {
	ln       *net.TCPListener
	rc       syscall.RawConn
	peer     netip.Addr
	ended    atomic.Bool
	shutOnce sync.Once
	// lfd is, on Linux, the loops' own duplicate of the listener's
	// descriptor, outside Go's poller (see detach); -1 elsewhere.
	lfd       int
	closeOnce sync.Once
	// busyPoll is SO_BUSY_POLL for every accepted connection (SetBusyPoll),
	// which they do not inherit from the listener.
	busyPoll int
}

// shut wakes every loop blocked in accept on the listener: accept(2) on
// an MPTCP listener ignores the receive timeout, and on any listener
// returns at once after a shutdown.
func (sh *CRRShared) shut() {
	sh.shutOnce.Do(func() { sh.shutListener() })
}

// NewCRRShared wraps the test's listener; connections from any address
// but peer are closed unanswered. On Linux it takes the listener out of
// Go's poller: it keeps a duplicate of its descriptor and closes ln (whose
// Addr still answers; closing it again is harmless). Close releases what
// it kept, after the loops returned.
func NewCRRShared(ln *net.TCPListener, peer netip.Addr) (*CRRShared, error) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return nil, err
	}
	sh := &CRRShared{ln: ln, rc: rc, peer: peer.Unmap(), lfd: -1}
	if err := sh.detach(); err != nil {
		return nil, err
	}
	return sh, nil
}

// Close closes the listener's duplicate kept by NewCRRShared, if any.
func (sh *CRRShared) Close() error {
	var err error
	sh.closeOnce.Do(func() { err = sh.closeListener() })
	return err
}

// CRRServer accepts TCP_CRR connections on the shared listener and answers
// each with one response, then closes it.
type CRRServer struct {
	base
	follow
	sh        *CRRShared
	req, resp int
}

// NewCRRServer returns one server loop on sh.
func NewCRRServer(sh *CRRShared, req, resp int) *CRRServer {
	return &CRRServer{base: newBase(sh.shut), follow: newFollow(), sh: sh, req: req, resp: resp}
}

// Run answers connections until the client's end, Stop or a failure.
// Counters.Packets counts answered connections; Counters.SendErrors those
// refused because they came from another address.
func (s *CRRServer) Run() error {
	err := s.loop()
	if s.stopped() || s.Ended() {
		return nil
	}
	return err
}

// Ended reports the client's end, seen by any of the test's loops.
func (s *CRRServer) Ended() bool { return s.sh.ended.Load() }

// ListenCRR opens a TCP_CRR test's listener on an ephemeral port of host,
// with opts set on the listener so that every accepted connection
// inherits them.
func ListenCRR(network, host string, opts Options) (*net.TCPListener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = setSockOpts(fd, opts) }); err != nil {
			return err
		}
		return serr
	}}
	// Plain TCP: Go listens with MPTCP by default, and an MPTCP listener's
	// blocking accept ignores SO_RCVTIMEO (Linux 6.18), so the server loops
	// would never wake to see Stop while no connection comes.
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), network, net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	return ln.(*net.TCPListener), nil
}
