package engine

import (
	"fmt"
	"net"
	"syscall"
)

// TCPSender writes size-byte messages of a payload on a TCP connection.
type TCPSender struct {
	base
	conn    *net.TCPConn
	rc      syscall.RawConn
	payload *Payload
	size    int
	mode    sendMode
	zc      *zeroCopy // MSG_ZEROCOPY state, when mode is sendMsgZeroCopy
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
	return &TCPSender{base: newBase(wakeConn(c)), conn: c, rc: rc, payload: p, size: size}, nil
}

// Run writes until Stop or a failure.
func (s *TCPSender) Run() error {
	err := s.send()
	if s.stopped() {
		return nil
	}
	return err
}

// Finish sends the end of stream. With MSG_ZEROCOPY it then waits a
// little for the kernel's last completions, so that they are counted.
func (s *TCPSender) Finish() error {
	err := s.conn.CloseWrite()
	s.awaitCompletions()
	return err
}

// Conn returns the connection.
func (s *TCPSender) Conn() net.Conn { return s.conn }

// Close closes the connection.
func (s *TCPSender) Close() error { return s.conn.Close() }

// TCPRawConn gives samplers the socket (TCP_INFO).
func (s *TCPSender) TCPRawConn() syscall.RawConn { return s.rc }

// Info reads the socket's buffer sizes and congestion control.
func (s *TCPSender) Info() (SocketInfo, error) { return rawInfo(s.rc, true) }

// TCPReceiver reads a TCP connection to its end, size bytes per call.
type TCPReceiver struct {
	base
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
	return &TCPReceiver{base: newBase(wakeConn(c)), conn: c, rc: rc, size: size}, nil
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

// Finish does nothing: a receiver sends nothing.
func (r *TCPReceiver) Finish() error { return nil }

// Conn returns the connection.
func (r *TCPReceiver) Conn() net.Conn { return r.conn }

// Close closes the connection.
func (r *TCPReceiver) Close() error { return r.conn.Close() }

// TCPRawConn gives samplers the socket (TCP_INFO).
func (r *TCPReceiver) TCPRawConn() syscall.RawConn { return r.rc }

// Info reads the socket's buffer sizes and congestion control.
func (r *TCPReceiver) Info() (SocketInfo, error) { return rawInfo(r.rc, true) }
