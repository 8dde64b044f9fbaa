//go:build !wirespeed_portable

package engine

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// send is the UDP sending loop: one write(2) per datagram by default, as
// netperf's and iperf3's loops make, or with a send batch (SetSendBatch)
// batches through sendmmsg(2). Each datagram is stamped with its sequence
// number and its send time, the one clock read as it (or its batch) goes
// to the kernel (see stampBatch), paced by absolute time when a rate is
// set, so that the average rate is exact whatever the timer's granularity.
//
// The socket is taken out of Go's poller (takeRaw) and the calls are
// raw, on a locked thread of their own (ownFiles): through the scheduler, each sendmmsg of a
// batch lasted long enough for the runtime's monitor to hand the P off,
// and the sender switched context 89 000 times a second, against 900 for
// iperf3's. Every datagram the kernel refuses (EAGAIN: the socket buffer
// is full; ENOBUFS: no memory or a full device queue) is counted once as a
// send error each time it is refused, whether the refusal ended the call
// or came after some datagrams of the batch went out, and is sent again
// with the same sequence number: it is counted as sent once, when the
// kernel took it. The loop waits in poll(2) until the buffer drains.
func (s *UDPSender) send() error {
	b := newMmsgBatch(udpBatch, s.size)
	for i, buf := range b.bufs {
		copy(buf, s.payload.at((i*s.size)%s.payload.ring, s.size))
	}
	fd, err := s.takeRaw()
	if err != nil {
		return err
	}
	return ownFiles(fd, func() error { return s.sendOn(fd, b) })
}

// sendOn is send's loop on the loop's own non-blocking fd.
func (s *UDPSender) sendOn(fd int, b *mmsgBatch) error {
	if s.batch <= 1 {
		return s.sendEach(fd, b.bufs)
	}
	start := time.Now()
	var seq uint64
	per := uint64(s.segments()) // datagrams per send: more than one with GSO
	for {
		n, ok := s.nextSends(start, seq, per)
		if !ok {
			return nil
		}
		s.stampBatch(b.bufs[:n], seq, per, int64(time.Since(s.epoch)))
		m, e := b.sendmmsgRaw(uintptr(fd), n)
		if e != 0 {
			if err := s.sendFailed(fd, e); err != nil {
				return err
			}
			continue
		}
		seq += uint64(m) * per
		s.ctr.packets.Store(int64(seq))
		s.ctr.bytes.Add(int64(m * s.size))
		s.ctr.calls.Add(1)
		if m < n {
			// sendmmsg stops at the first datagram the kernel refuses
			// and, having sent some, returns their count and drops the
			// error: datagram m was refused (one error, as the kernel
			// counts it), the ones after it were never tried. All are
			// sent again from m by the next call, restamped with the
			// same numbers.
			s.ctr.sendErrors.Add(1)
			waitWritable(fd)
		}
	}
}

// sendFailed handles a send call the kernel refused with e, for both
// loops: nil when the loop goes on (the datagrams are sent again with the
// same numbers), the error that ends it otherwise.
func (s *UDPSender) sendFailed(fd int, e unix.Errno) error {
	switch e {
	case unix.EINTR:
	case unix.EAGAIN:
		// Socket buffer full: counted, then wait until it drains.
		s.ctr.sendErrors.Add(1)
		waitWritable(fd)
	case unix.ENOBUFS, unix.ECONNREFUSED:
		// Device queue full, or the peer's port answered ICMP
		// unreachable to an earlier datagram: counted, retried.
		s.ctr.sendErrors.Add(1)
	default:
		// EMSGSIZE: a datagram larger than the path takes, with
		// fragmenting forbidden; say the MTU.
		return tooBig(uintptr(fd), s.datagramSize(), e)
	}
	return nil
}

// sendEach is the sending loop without a batch: one write(2) of one send
// (one datagram, or with GSO the datagrams the kernel cuts it into) per
// call, stamped just before it. It takes the buffers in turn, so that the
// payload varies as much as in a batch.
//
// It calls write(2), not sendto(2) as rawWrite does for the TCP and RR
// loops to skip the VFS layer's file position lock and fsnotify hook:
// one write(2) per datagram is what the documentation promises, and
// what the test counting the sender's calls reads (syscw in
// /proc/self/io counts write(2) and its kin, not sendto).
func (s *UDPSender) sendEach(fd int, bufs [][]byte) error {
	start := time.Now()
	var seq uint64
	per := uint64(s.segments())
	i := 0
	for {
		// One datagram a call, whatever the pace allows at once.
		if _, ok := s.nextSends(start, seq, per); !ok {
			return nil
		}
		buf := bufs[i]
		s.stamp(buf, seq, uint64(time.Since(s.epoch)))
		_, _, e := syscall.RawSyscall6(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if e != 0 {
			if err := s.sendFailed(fd, e); err != nil {
				return err
			}
			continue
		}
		seq += per
		s.ctr.packets.Store(int64(seq))
		s.ctr.bytes.Add(int64(s.size))
		s.ctr.calls.Add(1)
		if i++; i == len(bufs) {
			i = 0
		}
	}
}

// takeRaw takes the socket out of Go's poller for a loop that makes raw
// non-blocking calls on a thread of its own (ownFiles), and returns the
// descriptor.
func (s *streamSocket) takeRaw() (int, error) {
	frc, err := s.take()
	if err != nil {
		return 0, err
	}
	var fd int
	frc.Control(func(f uintptr) { fd = int(f) })
	return fd, nil
}

// waitWritable waits in poll(2) until fd is writable, at most
// pollInterval, without the Go scheduler.
func waitWritable(fd int) {
	pfd := unix.PollFd{Fd: int32(fd), Events: unix.POLLOUT}
	ts := unix.NsecToTimespec(int64(pollInterval))
	unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}

// writeNonblocking writes b on fd once, whatever comes of it.
func writeNonblocking(fd int, b []byte) { unix.Write(fd, b) }

// receive is the UDP receiving loop: recvmsg(2) of one datagram per call
// by default, or recvmmsg(2) of up to r.batch (SetRecvBatch), each
// datagram's arrival time the kernel's receive timestamp from its control
// messages (rxControl), or without one a clock read, at most one per call
// and none when every datagram carries its stamp.
func (r *UDPReceiver) receive() error {
	b := newMmsgBatch(r.batch, r.size)
	b.withControl(rxControlSpace)
	// A blocking receive on a socket outside Go's poller, waiting for the
	// first datagram and, with a batch, taking what else has arrived
	// (MSG_WAITFORONE): through the poller, the receiver parked and was
	// woken for every datagram or two, and the wake-ups, not the
	// datagrams, took its CPU.
	fd, undo, err := r.takeBlocking()
	if err != nil {
		return err
	}
	defer undo()
	return ownFiles(fd, func() error { return r.receiveOn(fd, b) })
}

// receiveOn is receive's loop on the blocking fd.
func (r *UDPReceiver) receiveOn(fd int, b *mmsgBatch) error {
	seen := false
	for !r.stop.Load() {
		var n int
		var e unix.Errno
		switch {
		case r.batch == 1 && !r.stamps:
			n, e = b.recvfromWait(uintptr(fd))
		case r.batch == 1:
			n, e = b.recvmsgWait(uintptr(fd))
		default:
			n, e = b.recvmmsgWait(uintptr(fd))
		}
		switch e {
		case 0:
		case unix.EINTR, unix.EAGAIN:
			continue // a signal or the poll timeout: look at the stop flag
		case unix.ECONNREFUSED:
			// An ICMP unreachable for an earlier datagram of ours: none
			// are sent on this socket, so it is stale; read on.
			continue
		default:
			return e
		}
		if !seen && n > 0 {
			seen = true
			r.markFirst()
		}
		// A plain load first: the swap is a locked instruction, and the
		// window is marked once a test.
		if r.mark.Load() && r.mark.Swap(false) {
			r.tr.markWindow()
		}
		r.calls++
		var clk callClock
		for i := range n {
			if !r.handleMsg(b, i, &clk) {
				r.publish()
				r.markEnded()
				return nil
			}
		}
		r.publish()
	}
	return nil
}

// callClock is the arrival time of the datagrams of one receive call that
// carry no kernel timestamp: the clock read once, when the first of them
// needs it, on the kernel's clock (the wall clock) so that the two mix.
type callClock struct {
	at   int64
	read bool
}

func (c *callClock) now(r *UDPReceiver) int64 {
	if !c.read {
		c.at, c.read = time.Now().UnixNano()-r.epochWall, true
	}
	return c.at
}

// handleMsg processes the i-th datagram of a receive batch, or with GRO
// the datagrams the kernel joined in it: each has the size its control
// message gives, the last one possibly shorter, and each is counted by its
// own sequence number. It arrived when the kernel stamped it, or at now
// when it carries no stamp (clk). A joined buffer has one stamp for all its
// datagrams, the time the kernel handed the joined buffer up: only the
// first datagram gives the jitter a sample, and the rest are counted
// without one, because giving them all the same arrival time would show
// the joining as jitter that was never on the wire. It returns false at
// the end-of-stream datagram.
func (r *UDPReceiver) handleMsg(b *mmsgBatch, i int, clk *callClock) bool {
	h := &b.hdrs[i]
	d := b.bufs[i][:h.len]
	seg, at, ok := rxControl(b.ctrl[i][:min(int(h.hdr.Controllen), len(b.ctrl[i]))])
	var now int64
	if ok {
		now = at - r.epochWall
	} else {
		now = clk.now(r)
	}
	if seg > 0 && len(d) > seg {
		r.ctr.coalesced.Add(1)
		for off := 0; off < len(d); off += seg {
			if !r.handle(d[off:min(off+seg, len(d))], now, off == 0) {
				return false
			}
		}
		return true
	}
	return r.handle(d, now, true)
}
