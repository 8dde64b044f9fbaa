//go:build !linux

package engine

import (
	"errors"
	"io"
	"syscall"
)

// send is the portable loop through net.Conn.
func (s *TCPSender) send() error {
	buf, ring, size := s.payload.buf, s.payload.ring, s.size
	off := 0
	for !s.stop.Load() {
		n, err := s.conn.Write(buf[off : off+size])
		if n > 0 {
			s.ctr.bytes.Add(int64(n))
			s.ctr.calls.Add(1)
			off = (off + n) % ring
		}
		if err != nil {
			if isTimeout(err) && s.stopped() {
				return nil
			}
			return err
		}
	}
	return nil
}

// receive is the portable receive loop through net.Conn.
func (r *TCPReceiver) receive(buf []byte) error {
	seen := false
	for !r.stop.Load() {
		n, err := r.conn.Read(buf)
		if n > 0 {
			r.ctr.bytes.Add(int64(n))
			r.ctr.calls.Add(1)
			if !seen {
				seen = true
				r.markFirst()
			}
		}
		if errors.Is(err, io.EOF) {
			r.ended.Store(true)
			return nil
		}
		if err != nil {
			if isTimeout(err) && r.stopped() {
				return nil
			}
			return err
		}
	}
	return nil
}

// shutdownWrite is not reached on other platforms: their loops keep the
// connection, and closeWrite uses it.
func shutdownWrite(syscall.RawConn) error { return ErrUnsupported }
