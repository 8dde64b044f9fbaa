package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// The latency probes of an RRUL test: isochronous UDP probes echoed by the
// server (as irtt's), and TCP probes, each a fresh connection with one
// request and its response (TCPProbeServer answers them). They use
// Go's poller rather than the raw loops of the request/response tests:
// they move a few dozen packets a second, and the idle probe's round trip
// on loopback stays within the checks of rrul_test.go.

// ProbeSample is one probe: when it was sent, from the prober's origin,
// and its round trip; RTTNanos is -1 for a probe never answered.
// ConnectNanos is a TCP probe's connect (the handshake's round trip),
// RTTNanos its request and response on the new connection.
type ProbeSample struct {
	SentNanos    int64
	RTTNanos     int64
	ConnectNanos int64
}

// probeMagic starts every UDP probe and its echo.
var probeMagic = [4]byte{'w', 's', 'p', 'r'}

// probeAnswerWait is how long a prober waits for the answers of its last
// probes after it stops sending.
const probeAnswerWait = time.Second

// probeSamples is a bounded, lockable list of samples.
type probeSamples struct {
	mu   sync.Mutex
	list []ProbeSample
	max  int
}

func (s *probeSamples) snapshot() []ProbeSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ProbeSample(nil), s.list...)
}

// UDPProber sends a probe every interval on a connected UDP socket and
// records the round trip of each echo.
type UDPProber struct {
	conn     *net.UDPConn
	interval time.Duration
	origin   time.Time
	samples  probeSamples
}

// NewUDPProber returns a prober on c sending every interval, its sample
// times measured from origin, keeping at most max samples.
func NewUDPProber(c *net.UDPConn, interval time.Duration, origin time.Time, max int) *UDPProber {
	return &UDPProber{conn: c, interval: interval, origin: origin, samples: probeSamples{max: max}}
}

// Run sends probes on an absolute schedule until ctx ends, then waits up
// to probeAnswerWait for the last answers. It returns within that of ctx's
// end. An echo that is not one of this prober's probes (wrong size, magic,
// sequence or send time) is ignored.
func (p *UDPProber) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.receive()
	}()
	err := p.send(ctx)
	// The last answers: wait until all came or the wait is over.
	deadline := time.Now().Add(probeAnswerWait)
	for time.Now().Before(deadline) && p.outstanding() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	p.conn.SetReadDeadline(time.Unix(1, 0))
	<-done
	return err
}

func (p *UDPProber) outstanding() int {
	p.samples.mu.Lock()
	defer p.samples.mu.Unlock()
	n := 0
	for _, s := range p.samples.list {
		if s.RTTNanos < 0 {
			n++
		}
	}
	return n
}

func (p *UDPProber) send(ctx context.Context) error {
	buf := make([]byte, probeSize)
	tm := time.NewTimer(0)
	defer tm.Stop()
	for seq := 0; seq < p.samples.max; seq++ {
		next := p.origin.Add(time.Duration(seq) * p.interval)
		tm.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return nil
		case <-tm.C:
		}
		sent := time.Since(p.origin).Nanoseconds()
		copy(buf, probeMagic[:])
		binary.BigEndian.PutUint32(buf[4:], uint32(seq))
		binary.BigEndian.PutUint64(buf[8:], uint64(sent))
		p.samples.mu.Lock()
		p.samples.list = append(p.samples.list, ProbeSample{SentNanos: sent, RTTNanos: -1})
		p.samples.mu.Unlock()
		if _, err := p.conn.Write(buf); err != nil && !errors.Is(err, net.ErrClosed) {
			// An ICMP unreachable from an earlier probe: this one is
			// lost, the next may go.
			continue
		}
	}
	return nil
}

func (p *UDPProber) receive() {
	buf := make([]byte, 2*probeSize)
	for {
		n, err := p.conn.Read(buf)
		now := time.Since(p.origin).Nanoseconds()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // ECONNREFUSED for a probe the server did not take yet
		}
		if n != probeSize || [4]byte(buf[:4]) != probeMagic {
			continue
		}
		seq := int(binary.BigEndian.Uint32(buf[4:]))
		sent := int64(binary.BigEndian.Uint64(buf[8:]))
		p.samples.mu.Lock()
		if seq < len(p.samples.list) && p.samples.list[seq].SentNanos == sent && p.samples.list[seq].RTTNanos < 0 {
			p.samples.list[seq].RTTNanos = max(now-sent, 1)
		}
		p.samples.mu.Unlock()
	}
}

// Samples returns every probe sent so far, answered or not.
func (p *UDPProber) Samples() []ProbeSample { return p.samples.snapshot() }

// probeSize is the payload of a UDP probe (spec.ProbeSize).
const probeSize = 32

// UDPEchoer answers the UDP probes of an RRUL test on the server: it sends
// back each datagram that is a probe, at most maxPerSecond of them a
// second on average (with a burst of a few), so that no client can make
// the server send faster than the probe rate it asked for and the
// server's UDP limit allow. Probes over the rate are dropped and counted.
type UDPEchoer struct {
	conn         *net.UDPConn
	maxPerSecond float64
	echoed       atomic.Int64
	dropped      atomic.Int64
}

// echoBurst is the fewest probes over the rate the echoer answers at once.
const echoBurst = 4

// NewUDPEchoer returns the echoer on c (connected to the proven peer).
func NewUDPEchoer(c *net.UDPConn, maxPerSecond float64) *UDPEchoer {
	return &UDPEchoer{conn: c, maxPerSecond: maxPerSecond}
}

// Run echoes until ctx ends; it returns within pollInterval of that.
func (e *UDPEchoer) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { e.conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 2*probeSize)
	// A burst of half a second's probes: a server thread descheduled for
	// a moment finds several queued, and they are answers due, not a
	// flood; the average stays at the rate.
	burst := max(echoBurst, e.maxPerSecond/2)
	tokens := burst
	last := time.Now()
	for ctx.Err() == nil {
		n, err := e.conn.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			continue
		}
		if n != probeSize || [4]byte(buf[:4]) != probeMagic {
			e.dropped.Add(1)
			continue
		}
		now := time.Now()
		tokens = min(tokens+now.Sub(last).Seconds()*e.maxPerSecond, burst)
		last = now
		if tokens < 1 {
			e.dropped.Add(1)
			continue
		}
		tokens--
		if _, err := e.conn.Write(buf[:n]); err == nil {
			e.echoed.Add(1)
		}
	}
	return nil
}

// TCPProber makes a TCP probe every interval: a new connection to the
// server's probe listener (its connect timed), one byte of request and
// one of response (timed), and the close. Probes overlap when the path is
// slower than the interval, up to tcpProbesInFlight; a probe due while
// that many are out is not sent.
type TCPProber struct {
	network, addr string
	opts          Options
	interval      time.Duration
	origin        time.Time
	samples       probeSamples
	Skipped       atomic.Int64
}

// tcpProbesInFlight bounds the TCP probes out at once; tcpProbeTimeout
// bounds one probe.
const (
	tcpProbesInFlight = 16
	tcpProbeTimeout   = 5 * time.Second
)

// NewTCPProber returns a prober toward addr.
func NewTCPProber(network, addr string, opts Options, interval time.Duration, origin time.Time, max int) *TCPProber {
	return &TCPProber{network: network, addr: addr, opts: opts, interval: interval, origin: origin, samples: probeSamples{max: max}}
}

// Run probes on an absolute schedule until ctx ends, then waits for the
// probes out, each bounded by tcpProbeTimeout.
func (p *TCPProber) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, tcpProbesInFlight)
	tm := time.NewTimer(0)
	defer tm.Stop()
	for seq := 0; seq < p.samples.max; seq++ {
		next := p.origin.Add(time.Duration(seq) * p.interval)
		tm.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			seq = p.samples.max
			continue
		case <-tm.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			p.Skipped.Add(1)
			continue
		}
		sent := time.Since(p.origin).Nanoseconds()
		p.samples.mu.Lock()
		i := len(p.samples.list)
		p.samples.list = append(p.samples.list, ProbeSample{SentNanos: sent, RTTNanos: -1, ConnectNanos: -1})
		p.samples.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conn, rtt := p.probe()
			p.samples.mu.Lock()
			p.samples.list[i].ConnectNanos, p.samples.list[i].RTTNanos = conn, rtt
			p.samples.mu.Unlock()
		}()
	}
	wg.Wait()
	return nil
}

// probe makes one probe: its connect and request/response times, -1 for
// what did not complete.
func (p *TCPProber) probe() (connect, rtt int64) {
	d := net.Dialer{Timeout: tcpProbeTimeout, LocalAddr: localAddr(p.network, p.opts), Control: controlOpts(p.opts)}
	d.SetMultipathTCP(false)
	t0 := time.Now()
	c, err := d.Dial(p.network, p.addr)
	if err != nil {
		return -1, -1
	}
	defer c.Close()
	t1 := time.Now()
	connect = max(t1.Sub(t0).Nanoseconds(), 1)
	c.SetDeadline(t0.Add(tcpProbeTimeout))
	var b [1]byte
	if _, err := c.Write(b[:]); err != nil {
		return connect, -1
	}
	if _, err := c.Read(b[:]); err != nil {
		return connect, -1
	}
	return connect, max(time.Since(t1).Nanoseconds(), 1)
}

// Samples returns every probe made so far.
func (p *TCPProber) Samples() []ProbeSample { return p.samples.snapshot() }

// TCPProbeServer answers an RRUL test's TCP probes on its listener: for
// each connection from the peer, one byte of request, one of response,
// and the close; connections from anyone else are closed unanswered. It
// uses Go's poller, as the probers do: it waits for a few connections a
// second and must never hold a thread the runtime needs.
type TCPProbeServer struct {
	ln       *net.TCPListener
	peer     netip.Addr
	answered atomic.Int64
	refused  atomic.Int64
}

// NewTCPProbeServer returns the server of ln, answering peer alone.
func NewTCPProbeServer(ln *net.TCPListener, peer netip.Addr) *TCPProbeServer {
	return &TCPProbeServer{ln: ln, peer: peer.Unmap()}
}

// Run answers probes until ctx ends or the listener is closed. Each
// connection has tcpProbeTimeout to send its request.
func (s *TCPProbeServer) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.ln.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, tcpProbesInFlight)
	for {
		c, err := s.ln.AcceptTCP()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil
			}
			continue
		}
		if a, ok := c.RemoteAddr().(*net.TCPAddr); !ok || a.AddrPort().Addr().Unmap() != s.peer {
			s.refused.Add(1)
			c.Close()
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			// More probes at once than a client of this test makes.
			s.refused.Add(1)
			c.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			defer c.Close()
			c.SetDeadline(time.Now().Add(tcpProbeTimeout))
			var b [1]byte
			if n, _ := c.Read(b[:]); n != 1 {
				return
			}
			if _, err := c.Write(b[:]); err == nil {
				s.answered.Add(1)
			}
		})
	}
}
