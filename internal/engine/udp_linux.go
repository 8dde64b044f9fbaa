package engine

import (
	"time"

	"golang.org/x/sys/unix"
)

// send is the UDP sending loop: batches of datagrams through sendmmsg(2),
// each stamped with its sequence number and the batch's send time (one
// clock read per batch), paced by absolute time when a rate is set, so
// that the average rate is exact whatever the timer's granularity.
func (s *UDPSender) send() error {
	b := newMmsgBatch(udpBatch, s.size)
	for i, buf := range b.bufs {
		copy(buf, s.payload.at((i*s.size)%s.payload.ring, s.size))
	}
	start := time.Now()
	var seq uint64
	var ferr error
	per := uint64(s.segments()) // datagrams per send: more than one with GSO
	for !s.stopped() {
		n, next := s.due(start, seq/per)
		if n == 0 {
			if !s.sleepUntil(next) {
				break
			}
			continue
		}
		now := uint64(time.Since(s.epoch))
		for i := range n {
			s.stamp(b.bufs[i], seq+uint64(i)*per, now)
		}
		err := s.rc.Write(func(fd uintptr) bool {
			for {
				m, e := b.sendmmsg(fd, n)
				switch e {
				case 0:
					seq += uint64(m) * per
					s.ctr.packets.Store(int64(seq))
					s.ctr.bytes.Add(int64(m * s.size))
					s.ctr.calls.Add(1)
					return true
				case unix.EINTR:
					continue
				case unix.EAGAIN:
					// Socket buffer full: counted, then wait until it drains.
					s.ctr.sendErrors.Add(1)
					return false
				case unix.ENOBUFS, unix.ECONNREFUSED:
					// Device queue full, or the peer's port answered ICMP
					// unreachable to an earlier datagram: counted, retried.
					s.ctr.sendErrors.Add(1)
					return true
				default:
					ferr = e
					return true
				}
			}
		})
		if ferr != nil {
			return ferr
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

// receive is the UDP receiving loop: batches through recvmmsg(2), one
// clock read per batch for the arrival time.
func (r *UDPReceiver) receive() error {
	b := newMmsgBatch(udpBatch, r.size)
	if r.gro {
		b.withControl(groControl)
	}
	seen := false
	var ferr error
	err := r.rc.Read(func(fd uintptr) bool {
		for !r.stop.Load() {
			n, e := b.recvmmsg(fd)
			switch e {
			case 0:
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			case unix.ECONNREFUSED:
				// An ICMP unreachable for an earlier datagram of ours: none
				// are sent on this socket, so it is stale; read on.
				continue
			default:
				ferr = e
				return true
			}
			if !seen && n > 0 {
				seen = true
				r.markFirst()
			}
			if r.mark.Swap(false) {
				r.tr.markWindow()
			}
			now := int64(time.Since(r.epoch))
			r.ctr.calls.Add(1)
			for i := range n {
				if !r.handleMsg(b, i, now) {
					r.publish()
					r.ended.Store(true)
					return true
				}
			}
			r.publish()
		}
		return true
	})
	if ferr != nil {
		return ferr
	}
	if isTimeout(err) && r.stopped() {
		return nil
	}
	return err
}

// groControl is the control buffer of a GRO receive: room for the
// UDP_GRO message and its int.
var groControl = unix.CmsgSpace(4)

// handleMsg processes the i-th datagram of a receive batch, or with GRO
// the datagrams the kernel joined in it: each has the size its control
// message gives, the last one possibly shorter, and each is counted by its
// own sequence number. It returns false at the end-of-stream datagram.
func (r *UDPReceiver) handleMsg(b *mmsgBatch, i int, now int64) bool {
	d := b.bufs[i][:b.hdrs[i].len]
	if b.ctrl != nil {
		if seg := groSegment(b.ctrl[i][:b.hdrs[i].hdr.Controllen]); seg > 0 && len(d) > seg {
			r.ctr.coalesced.Add(1)
			for off := 0; off < len(d); off += seg {
				if !r.handle(d[off:min(off+seg, len(d))], now) {
					return false
				}
			}
			return true
		}
	}
	return r.handle(d, now)
}
