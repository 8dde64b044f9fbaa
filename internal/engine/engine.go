// Package engine owns the data path: it opens and configures data sockets
// and runs the hot loops that move payload and count it. It does not
// print, format, allocate per message or read the clock per call; the
// caller samples the counters and decides when to stop.
//
// The Linux loops (stream_linux.go) issue one write(2) or read(2) per
// message straight on the socket through syscall.RawConn, keeping the
// descriptor's poller lock for the whole loop and going back to the Go
// poller only when the socket would block. Other platforms use net.Conn.
package engine

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"wirespeed/internal/spec"
)

// Stream runs one data connection's loop and counts what it moved.
// Its counters may be read from any goroutine while the loop runs.
type Stream struct {
	conn *net.TCPConn
	rc   syscall.RawConn

	// The loop's own counters, written only by the loop goroutine. Padding
	// keeps them off the cache line of the fields other goroutines write.
	_     [64]byte
	bytes atomic.Int64
	calls atomic.Int64
	_     [48]byte

	stop      atomic.Bool
	eof       atomic.Bool
	firstOnce sync.Once
	first     chan struct{}
	firstAt   time.Time // written once before first is closed
}

// NewStream wraps an established TCP data connection.
func NewStream(c *net.TCPConn) (*Stream, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("data connection: %w", err)
	}
	return &Stream{conn: c, rc: rc, first: make(chan struct{})}, nil
}

// Bytes returns the payload bytes the loop has moved so far.
func (s *Stream) Bytes() int64 { return s.bytes.Load() }

// Calls returns the send or receive system calls that moved data so far.
func (s *Stream) Calls() int64 { return s.calls.Load() }

// RawConn gives samplers access to the socket (TCP_INFO).
func (s *Stream) RawConn() syscall.RawConn { return s.rc }

// Conn returns the connection the stream runs on.
func (s *Stream) Conn() *net.TCPConn { return s.conn }

// FirstByte is closed when a receiving loop reads its first byte.
func (s *Stream) FirstByte() <-chan struct{} { return s.first }

// FirstByteAt is the monotonic time of the first byte received; valid once
// FirstByte is closed.
func (s *Stream) FirstByteAt() time.Time { return s.firstAt }

// EOF reports whether a receiving loop read up to the sender's end of
// stream.
func (s *Stream) EOF() bool { return s.eof.Load() }

// Stop makes the loop return promptly, also when it is waiting for the
// socket. It is safe to call more than once and from any goroutine.
func (s *Stream) Stop() {
	s.stop.Store(true)
	// A deadline in the past wakes a loop parked in the poller.
	s.conn.SetDeadline(time.Unix(1, 0))
}

// CloseWrite sends the end of stream after a sending loop has returned.
func (s *Stream) CloseWrite() error { return s.conn.CloseWrite() }

// Close closes the connection.
func (s *Stream) Close() error { return s.conn.Close() }

// Send writes size-byte messages from p until Stop is called or the
// connection fails. It returns nil when stopped.
func (s *Stream) Send(p *Payload, size int) error {
	if size < 1 || size > p.max {
		return fmt.Errorf("send size %d outside the payload's 1..%d", size, p.max)
	}
	err := s.send(p, size)
	if s.stop.Load() {
		return nil
	}
	return err
}

// Receive reads into a buffer of size bytes until the sender's end of
// stream (nil, and EOF reports true), Stop (nil) or a failure.
func (s *Stream) Receive(size int) error {
	if size < 1 {
		return fmt.Errorf("receive size %d must be at least 1", size)
	}
	buf := make([]byte, size)
	err := s.receive(buf)
	if s.stop.Load() && !s.eof.Load() {
		return nil
	}
	return err
}

// markFirst records the first received byte; called once per stream from
// the receive loop.
func (s *Stream) markFirst() {
	s.firstOnce.Do(func() {
		s.firstAt = time.Now()
		close(s.first)
	})
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

// randomRing is the length of a random payload's ring. It is larger than
// the windows of stream compressors on the path (deflate 32 KiB, LZ4
// 64 KiB) and than the largest TSO/GSO segment, so neither a packet nor a
// compression window ever sees repeated bytes, yet it stays cache-sized.
const randomRing = 256 << 10

// NewPayload builds the payload for messages of up to max bytes. kind is a
// spec payload kind; content is the file's bytes for spec.PayloadFile.
func NewPayload(kind string, content []byte, max int) (*Payload, error) {
	if max < 1 {
		return nil, fmt.Errorf("message size %d must be at least 1", max)
	}
	var src []byte
	switch kind {
	case spec.PayloadRandom:
		src = make([]byte, randomRing)
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

// Options are the socket settings of data connections.
type Options struct {
	SockBuf           int    // SO_SNDBUF and SO_RCVBUF; 0 leaves the system default
	CongestionControl string // TCP_CONGESTION; "" leaves the system default
	NoDelay           bool   // TCP_NODELAY
}

// SocketInfo is what the kernel granted a data socket.
type SocketInfo struct {
	SndBuf            int
	RcvBuf            int
	CongestionControl string
}
