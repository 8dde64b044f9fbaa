package engine

import (
	"golang.org/x/sys/unix"
)

// send is the hot loop: one write(2) per message straight on the
// non-blocking socket, inside a single RawConn.Write so the descriptor's
// lock is taken once, not per message. It returns to the Go poller only on
// EAGAIN. Written by hand because no library offers a loop this lean.
func (s *Stream) send(p *Payload, size int) error {
	buf, ring := p.buf, p.ring
	off := 0
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for !s.stop.Load() {
			n, err := unix.Write(int(fd), buf[off:off+size])
			if n > 0 {
				s.bytes.Add(int64(n))
				s.calls.Add(1)
				off = (off + n) % ring // a message may be longer than the ring
			}
			switch err {
			case nil:
			case unix.EAGAIN:
				return false // park in the poller until writable
			case unix.EINTR:
			default:
				werr = err
				return true
			}
		}
		return true
	})
	if werr != nil {
		return werr
	}
	if err != nil && isTimeout(err) && s.stop.Load() {
		return nil
	}
	return err
}

// receive is the receiving hot loop: one read(2) per call into buf.
func (s *Stream) receive(buf []byte) error {
	var rerr error
	seen := false
	err := s.rc.Read(func(fd uintptr) bool {
		for !s.stop.Load() {
			n, err := unix.Read(int(fd), buf)
			switch {
			case n > 0:
				s.bytes.Add(int64(n))
				s.calls.Add(1)
				if !seen {
					seen = true
					s.markFirst()
				}
				continue
			case err == nil: // n == 0: end of stream
				s.eof.Store(true)
				return true
			case err == unix.EAGAIN:
				return false
			case err == unix.EINTR:
				continue
			default:
				rerr = err
				return true
			}
		}
		return true
	})
	if rerr != nil {
		return rerr
	}
	if err != nil && isTimeout(err) && s.stop.Load() {
		return nil
	}
	return err
}
