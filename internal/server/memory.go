package server

import (
	"fmt"

	"wirespeed/internal/control"
	"wirespeed/internal/engine"
	"wirespeed/internal/iperf3"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// Memory budgets. Most of what a test costs the server is its buffers,
// and their sizes are the client's to choose: 32 streams of 64 MiB
// receive buffers are 2 GiB. So the server works out a test's buffers
// from its request, refuses a test whose buffers are over
// Admission.MaxTestMemory, and holds the running tests' buffers together
// within Admission.MaxMemory. The figure follows what the engine's loops
// allocate (docs/security.md, "Memory"); socket buffers (-S, -w) are the
// kernel's, bounded by its own limits, and not counted.

// Defaults of the memory budgets.
const (
	DefaultMaxTestMemory = 64 << 20
	DefaultMaxMemory     = 256 << 20
)

// What the engine's loops allocate besides the sizes a test asks for.
const (
	udpBatch  = 64       // datagrams per sendmmsg/recvmmsg batch
	rrMinRead = 64 << 10 // a request/response server reads into at least this
)

// payloadMemory is what the payload of a sender of messages of up to size
// bytes takes (engine.PayloadMemory).
func payloadMemory(kind string, fileLen, size int) int64 {
	return engine.PayloadMemory(kind, fileLen, size)
}

// testMemory is the buffer memory a wirespeed test makes this server
// allocate, from the engine's own figures (engine/memory.go): for each
// stream it receives on, a receive buffer (UDP: its batch of datagrams,
// 64 KiB each with --gro; TCP with --rx splice: its pipe too); for each
// stream it sends on, a batch of datagrams for UDP, and a memfd holding
// the payload with --zerocopy sendfile; the payload once when it sends;
// for request/response tests, each stream's request and response
// buffers. fileLen is the length of a --payload file.
func testMemory(t spec.Test, fileLen int) int64 {
	var n int64
	sends := false
	for _, st := range t.Streams() {
		switch {
		case t.Kind == spec.TCPCRR:
			n += int64(t.RequestSize) + int64(t.ResponseSize)
		case t.Kind.RR():
			n += int64(max(t.RequestSize, rrMinRead)) + int64(t.ResponseSize)
		case st.Dir == spec.ServerToClient:
			sends = true
			switch {
			case t.Kind == spec.UDPStream:
				n += engine.UDPSendMemory(t.SendSize)
			case t.ZeroCopy == spec.ZeroCopySendfile:
				n += engine.SendfileMemory(t.Payload.Kind, fileLen, t.SendSize)
			}
		case t.Kind == spec.UDPStream:
			n += engine.UDPReceiveMemory(t.SendSize, t.DatagramsPerRecvCall(), t.GRO)
		default:
			n += int64(t.RecvSize)
			if t.Rx == spec.RxSplice {
				n += engine.SpliceMemory
			}
		}
	}
	if sends {
		n += payloadMemory(t.Payload.Kind, fileLen, t.SendSize)
	}
	return n
}

// iperf3Memory is testMemory for an iperf3 client's parameters: the
// server's receivers read into max(len, 128 KiB) on TCP, its UDP loops
// batch udpBatch datagrams, and its senders share one random payload.
func iperf3Memory(p iperf3.Params) int64 {
	size := p.Len
	if size == 0 {
		size = spec.DefaultSendSize
		if p.UDP {
			size = spec.DefaultUDPSize
		}
	}
	var n int64
	sends := false
	for k := range p.Streams() {
		serverSends := p.Reverse || p.Bidirectional && k >= p.Parallel
		switch {
		case p.UDP:
			n += udpBatch * int64(size)
		case !serverSends:
			n += int64(max(size, spec.DefaultRecvSize))
		}
		sends = sends || serverSends
	}
	if sends {
		n += payloadMemory(spec.PayloadRandom, 0, size)
	}
	return n
}

// testCost is what a test makes this server hold: its buffers
// (testMemory) and its interval records (intervalMemory).
type testCost struct {
	buffers, intervals int64
}

func (c testCost) total() int64 { return c.buffers + c.intervals }

// costOf is what t costs this server; streamed: the client takes its
// interval reports as they come (control.TestRequest.StreamedIntervals).
func costOf(t spec.Test, fileLen int, streamed bool) testCost {
	return testCost{buffers: testMemory(t, fileLen), intervals: intervalMemory(t, streamed)}
}

// testMemoryLimit says why a test's memory is over the per-test budget,
// or returns "".
func (s *Server) testMemoryLimit(t spec.Test, c testCost) string {
	l := s.admission()
	mem := c.total()
	if mem <= l.MaxTestMemory {
		return ""
	}
	if c.buffers <= l.MaxTestMemory {
		// The interval records took it over.
		return fmt.Sprintf("a test whose buffers (%s) and interval records (%s: -i %v, -P %d, %d direction(s)) take %s on this server is over its limit of %s per test (serve --max-test-memory); ask for a longer interval (-i), fewer streams (-P) or smaller messages (-m, -M, -r, -l)",
			units.FormatBytes(float64(c.buffers)), units.FormatBytes(float64(c.intervals)), t.Interval, t.Parallel, len(t.Directions()), units.FormatBytes(float64(mem)), units.FormatSize(l.MaxTestMemory))
	}
	return fmt.Sprintf("a test whose buffers take %s on this server is over its limit of %s per test (serve --max-test-memory); ask for smaller messages (-m, -M, -r, -l) or fewer streams (-P)",
		units.FormatSize(mem), units.FormatSize(l.MaxTestMemory))
}

// reserveMemory takes mem bytes of the server-wide budget for a test and
// returns the function that gives them back, or a message saying why the
// running tests leave no room for it.
func (s *Server) reserveMemory(mem int64) (release func(), msg string) {
	limit := s.admission().MaxMemory
	for {
		used := s.safety.memory.Load()
		if used+mem > limit {
			return nil, fmt.Sprintf("the tests running on this server hold %s of buffers, and this one's %s would take them over its limit of %s (serve --max-memory); retry later",
				units.FormatSize(used), units.FormatSize(mem), units.FormatSize(limit))
		}
		if s.safety.memory.CompareAndSwap(used, used+mem) {
			return func() { s.safety.memory.Add(-mem) }, ""
		}
	}
}

// reserve takes the memory of a test or a relay for the session, or
// tells the client the server is busy and returns false.
func (ss *session) reserve(t spec.Test, fileLen int, streamed bool) (release func(), ok bool) {
	release, msg := ss.s.reserveMemory(costOf(t, fileLen, streamed).total())
	if msg != "" {
		ss.s.countRefused(refusedMemory)
		ss.log.Info("test refused", "test", t.Kind, "reason", refusedMemory, "limit", msg)
		ss.cc.SendError(control.CodeBusy, msg)
		return nil, false
	}
	return release, true
}
