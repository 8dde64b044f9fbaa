package engine

import "golang.org/x/sys/unix"

// send is the hot loop: one write(2) per message straight on the
// non-blocking socket, inside a single RawConn.Write so the descriptor's
// lock is taken once, not per message. It returns to the Go poller only on
// EAGAIN.
func (s *TCPSender) send() error {
	switch s.mode {
	case sendFile:
		return s.sendFile()
	case sendMsgZeroCopy:
		return s.sendMsgZeroCopy()
	}
	buf, ring, size := s.payload.buf, s.payload.ring, s.size
	off := 0
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for !s.stop.Load() {
			n, err := unix.Write(int(fd), buf[off:off+size])
			if n > 0 {
				s.ctr.bytes.Add(int64(n))
				s.ctr.calls.Add(1)
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
	if isTimeout(err) && s.stopped() {
		return nil
	}
	return err
}

// receive is the receiving hot loop: one read(2) per call into buf.
func (r *TCPReceiver) receive(buf []byte) error {
	switch r.mode {
	case rxSplice:
		return r.receiveSplice()
	case rxDiscard:
		return r.receiveDiscard(buf)
	}
	var rerr error
	seen := false
	err := r.rc.Read(func(fd uintptr) bool {
		for !r.stop.Load() {
			n, err := unix.Read(int(fd), buf)
			switch {
			case n > 0:
				r.ctr.bytes.Add(int64(n))
				r.ctr.calls.Add(1)
				if !seen {
					seen = true
					r.markFirst()
				}
			case err == nil: // n == 0: end of stream
				r.ended.Store(true)
				return true
			case err == unix.EAGAIN:
				return false
			case err == unix.EINTR:
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
	if isTimeout(err) && r.stopped() {
		return nil
	}
	return err
}
