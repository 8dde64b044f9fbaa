//go:build !linux

package engine

import (
	"errors"
	"io"
)

// send is the portable loop through net.Conn.
func (s *Stream) send(p *Payload, size int) error {
	buf, ring := p.buf, p.ring
	off := 0
	for !s.stop.Load() {
		n, err := s.conn.Write(buf[off : off+size])
		if n > 0 {
			s.bytes.Add(int64(n))
			s.calls.Add(1)
			off = (off + n) % ring // a message may be longer than the ring
		}
		if err != nil {
			if isTimeout(err) && s.stop.Load() {
				return nil
			}
			return err
		}
	}
	return nil
}

// receive is the portable receive loop through net.Conn.
func (s *Stream) receive(buf []byte) error {
	seen := false
	for !s.stop.Load() {
		n, err := s.conn.Read(buf)
		if n > 0 {
			s.bytes.Add(int64(n))
			s.calls.Add(1)
			if !seen {
				seen = true
				s.markFirst()
			}
		}
		if errors.Is(err, io.EOF) {
			s.eof.Store(true)
			return nil
		}
		if err != nil {
			if isTimeout(err) && s.stop.Load() {
				return nil
			}
			return err
		}
	}
	return nil
}
