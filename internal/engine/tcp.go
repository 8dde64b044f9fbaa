package engine

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// TCPSender writes size-byte messages of a payload on a TCP connection.
type TCPSender struct {
	base
	streamSocket
	conn    *net.TCPConn
	rc      syscall.RawConn
	payload *Payload
	size    int
	mode    sendMode
	zc      *zeroCopy // MSG_ZEROCOPY state, when mode is sendMsgZeroCopy
	// limit is the bytes to send before Run returns by itself (SetLimit);
	// 0 for no limit.
	limit int64
	pace  *pacer // SetRate; nil for unpaced
}

// SetLimit makes Run return once bytes have been sent (the last write
// shortened to fit); 0 or less sends until Stop. Call it before Run.
// Only the copying mode (write(2)) has a limit: the others refuse it
// in Run.
func (s *TCPSender) SetLimit(bytes int64) { s.limit = max(bytes, 0) }

// SetRate paces the writes to bitsPerSecond of payload (0 or +Inf: no
// pacing), as iperf3's -b paces a TCP stream: what is paced is what the
// loop hands to the kernel; a write that blocks on a full socket buffer
// holds the loop back further. Call it before Run. Only the copying mode
// is paced: the others refuse a rate in Run.
func (s *TCPSender) SetRate(bitsPerSecond float64) { s.pace = newStreamPacer(bitsPerSecond, s.size) }

// Reached reports whether a sender with a limit sent all of it.
func (s *TCPSender) Reached() bool { return s.limit > 0 && s.ctr.bytes.Load() >= s.limit }

// nextWrite is how many bytes the copying loop's next write takes, sent
// bytes sent so far: a message, shortened to what the limit leaves; ok is
// false once the limit is sent. With a rate it first waits until the
// pacer lets the write go, or stopped says to stop. A limit costs a
// compare per write, a rate a clock read (the pacer's): neither when not
// asked for. stopped is made once before the loop, not per write.
func (s *TCPSender) nextWrite(sent int64, stopped func() bool) (n int, ok bool) {
	n = s.size
	if s.limit > 0 {
		if sent >= s.limit {
			return 0, false
		}
		n = int(min(int64(n), s.limit-sent))
	}
	if s.pace != nil {
		s.pace.wait(n, stopped)
	}
	return n, true
}

// checkCopyOnly refuses a limit or a rate in a mode that has neither.
func (s *TCPSender) checkCopyOnly() error {
	if s.mode != sendCopy && (s.limit > 0 || s.pace != nil) {
		return fmt.Errorf("a fixed amount or a rate needs write(2) sends, not zero-copy ones")
	}
	return nil
}

// NewTCPSender returns the sending loop for c.
func NewTCPSender(c *net.TCPConn, p *Payload, size int) (*TCPSender, error) {
	if size < 1 || size > p.max {
		return nil, fmt.Errorf("send size %d outside the payload's 1..%d", size, p.max)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("data connection: %w", err)
	}
	s := &TCPSender{base: newBase(wakeConn(c)), conn: c, rc: rc, payload: p, size: size}
	s.streamSocket.init(c, rc)
	return s, nil
}

// Run writes until Stop, the limit of SetLimit, or a failure.
func (s *TCPSender) Run() error {
	if err := s.checkCopyOnly(); err != nil {
		return err
	}
	err := s.send()
	if s.stopped() {
		return nil
	}
	return err
}

// Finish sends the end of stream. With MSG_ZEROCOPY it then waits a
// little for the kernel's last completions, so that they are counted.
func (s *TCPSender) Finish() error {
	err := s.closeWrite()
	s.awaitCompletions()
	return err
}

// TCPReceiver reads a TCP connection to its end, size bytes per call.
type TCPReceiver struct {
	base
	follow
	streamSocket
	conn *net.TCPConn
	rc   syscall.RawConn
	size int
	mode rxMode
}

// NewTCPReceiver returns the receiving loop for c.
func NewTCPReceiver(c *net.TCPConn, size int) (*TCPReceiver, error) {
	if size < 1 {
		return nil, fmt.Errorf("receive size %d must be at least 1", size)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("data connection: %w", err)
	}
	r := &TCPReceiver{base: newBase(wakeConn(c)), follow: newFollow(), conn: c, rc: rc, size: size}
	r.streamSocket.init(c, rc)
	return r, nil
}

// Run reads until the sender's end of stream (Ended is then true), Stop
// or a failure.
func (r *TCPReceiver) Run() error {
	err := r.receive(make([]byte, r.size))
	if r.stopped() && !r.Ended() {
		return nil
	}
	return err
}

// Ended reports whether the receiver read the sender's end of stream.
func (r *TCPReceiver) Ended() bool { return r.ended.Load() }

// streamSocket is a stream loop's socket (TCP, or a UDP receiver's): the
// connection's, or, once the loop took it over on Linux (see
// takeBlocking), a duplicate of the descriptor the loop owns outside Go's
// poller.
type streamSocket struct {
	sconn net.Conn
	live  atomic.Pointer[rawHolder] // the socket now in use
	own   closer                    // the duplicate, once taken
	mu    sync.Mutex
}

func (s *streamSocket) init(c net.Conn, rc syscall.RawConn) {
	s.sconn = c
	s.live.Store(&rawHolder{rc})
}

// raw is the socket now in use.
func (s *streamSocket) raw() syscall.RawConn { return s.live.Load().rc }

// rawHolder boxes a RawConn for an atomic pointer.
type rawHolder struct{ rc syscall.RawConn }

// SyscallConn gives access to the socket now in use, for socket options
// and TCP_INFO.
func (s *streamSocket) SyscallConn() (syscall.RawConn, error) { return s.raw(), nil }

// Info reads the socket's buffer sizes and congestion control.
func (s *streamSocket) Info() (SocketInfo, error) { return rawInfo(s.raw(), true) }

// closeWrite sends the end of stream.
func (s *streamSocket) closeWrite() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own != nil {
		return shutdownWrite(s.raw())
	}
	if tc, ok := s.sconn.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return nil
}

// Close closes the socket.
func (s *streamSocket) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own != nil {
		return s.own.Close()
	}
	return s.sconn.Close()
}
