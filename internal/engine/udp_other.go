//go:build !linux

package engine

import (
	"syscall"
	"time"
)

// send is the portable UDP sending loop: one datagram per write.
func (s *UDPSender) send() error {
	buf := make([]byte, s.size)
	copy(buf, s.payload.at(0, s.size))
	start := time.Now()
	var seq uint64
	for !s.stopped() {
		n, next := s.due(start, seq)
		if n == 0 {
			if !s.sleepUntil(next) {
				break
			}
			continue
		}
		now := uint64(time.Since(s.epoch))
		for range n {
			s.hdr.stamp(buf, seq, now)
			if _, err := s.conn.Write(buf); err != nil {
				if isTimeout(err) && s.stopped() {
					return nil
				}
				s.ctr.sendErrors.Add(1)
				continue
			}
			seq++
			s.ctr.packets.Store(int64(seq))
			s.ctr.bytes.Add(int64(s.size))
			s.ctr.calls.Add(1)
		}
	}
	return nil
}

// receive is the portable UDP receiving loop: one datagram per read.
func (r *UDPReceiver) receive() error {
	buf := make([]byte, r.size)
	seen := false
	for !r.stopped() {
		n, err := r.conn.Read(buf)
		if err != nil {
			if isTimeout(err) && r.stopped() {
				return nil
			}
			return err
		}
		if !seen {
			seen = true
			r.markFirst()
		}
		if r.mark.Swap(false) {
			r.tr.markWindow()
		}
		r.ctr.calls.Add(1)
		if !r.handle(buf[:n], int64(time.Since(r.epoch))) {
			r.publish()
			r.ended.Store(true)
			return nil
		}
		r.publish()
	}
	return nil
}

// writeNonblocking writes b on fd once, whatever comes of it.
func writeNonblocking(fd int, b []byte) { syscall.Write(sysFD(uintptr(fd)), b) }
