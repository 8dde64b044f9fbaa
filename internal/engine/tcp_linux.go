//go:build !wirespeed_portable

package engine

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// send is the hot loop: one blocking send per message on a socket the
// loop owns outside Go's poller (takeBlocking), on an OS thread and file
// table of the loop's own (ownFiles), as netperf's and iperf's threads
// write. Parking in Go's poller each time
// the socket buffer filled, and being woken by it, cost a fifth of the
// throughput of 128 KiB messages on two cores against iperf3.
func (s *TCPSender) send() error {
	switch s.mode {
	case sendFile:
		return s.sendFile()
	case sendMsgZeroCopy:
		return s.sendMsgZeroCopy()
	}
	fd, undo, err := s.takeBlocking()
	if err != nil {
		return err
	}
	defer undo()
	return ownFiles(fd, func() error { return s.sendCopy(fd) })
}

// sendCopy writes on the blocking fd until Stop, the limit or a failure.
func (s *TCPSender) sendCopy(fd int) error {
	buf, ring, stopped := s.payload.buf, s.payload.ring, s.stopped
	var sent int64
	off := 0
	for !s.stop.Load() {
		m, ok := s.nextWrite(sent, stopped)
		if !ok {
			return nil
		}
		n, err := rawWrite(fd, buf[off:off+m])
		if n > 0 {
			s.ctr.bytes.Add(int64(n))
			s.ctr.calls.Add(1)
			sent += int64(n)
			off = (off + n) % ring // a message may be longer than the ring
		}
		switch err {
		case nil, unix.EAGAIN, unix.EINTR:
			// A send timeout or a signal: look at the stop flag.
		default:
			return err
		}
	}
	return nil
}

// receive is the receiving hot loop: one blocking receive per call into
// buf, on a socket the loop owns outside Go's poller, on a thread and
// file table of its own (see send).
func (r *TCPReceiver) receive(buf []byte) error {
	switch r.mode {
	case rxSplice:
		return r.receiveSplice()
	case rxDiscard:
		return r.receiveDiscard(buf)
	}
	fd, undo, err := r.takeBlocking()
	if err != nil {
		return err
	}
	defer undo()
	return ownFiles(fd, func() error { return r.receiveCopy(fd, buf) })
}

// receiveCopy reads the blocking fd into buf until the end of stream,
// Stop or a failure.
//
// It has two ways to wait for data. A busy receiver blocks in raw calls
// (rawRead): its waits are short and many, and a trip through the
// scheduler on each would cost more than sysmon's preemption of the loop
// every 10 ms. When a raw read comes back with nothing (a signal, most
// likely that preemption, or the receive timeout: the loop waited long),
// the receiver turns slow: it takes what is queued with rawReadNow and
// waits in waitRead, where sysmon does not signal it, until slowShort
// waits in a row came back within slowWait, when it is busy again.
func (r *TCPReceiver) receiveCopy(fd int, buf []byte) error {
	seen := false
	slow, short := false, 0
	for !r.stop.Load() {
		var n int
		var err error
		if !slow {
			n, err = rawRead(fd, buf)
			slow = err == unix.EAGAIN || err == unix.EINTR
			short = 0
		} else if n, err = rawReadNow(fd, buf); err == unix.EAGAIN {
			t := time.Now()
			n, err = waitRead(fd, buf)
			if time.Since(t) >= slowWait {
				short = 0
			} else if short++; short >= slowShort {
				slow = false
			}
		}
		switch {
		case n > 0:
			r.ctr.bytes.Add(int64(n))
			r.ctr.calls.Add(1)
			if !seen {
				seen = true
				r.markFirst()
			}
		case err == nil: // n == 0: end of stream
			r.markEnded()
			return nil
		case err == unix.EAGAIN || err == unix.EINTR:
			// A receive timeout or a signal: look at the stop flag.
		default:
			return err
		}
	}
	return nil
}

// slowWait and slowShort tell a busy receiver from a slow one
// (receiveCopy): a slow receiver whose last slowShort waits each ended
// within slowWait goes back to raw waits. A stream of a few Mbit/s waits
// tens of milliseconds between its sender's writes (and a few
// microseconds between the segments of one write); a receiver at
// loopback rates waits microseconds, thousands of times a second.
const (
	slowWait  = time.Millisecond
	slowShort = 4
)

// takeBlocking takes the socket out of Go's poller for a copying loop
// (take), makes it blocking with a poll timeout on a locked OS thread
// (blockingFD), and returns the descriptor and the function that undoes
// the blocking set-up. The duplicate stays the loop's socket until Close.
func (s *streamSocket) takeBlocking() (int, func(), error) {
	frc, err := s.take()
	if err != nil {
		return 0, nil, err
	}
	return blockingFD(frc)
}

// take detaches the socket from Go's poller (detach) and makes the
// duplicate the socket's own, the one Close and the counters' readers
// use from now on. The duplicate is published before the connection is
// closed: a sampler reading TCP_INFO through raw() while the loop takes
// over (at the window's opening, on a busy host) finds an open socket
// either way, where it used to find the closed connection and lose the
// first interval's retransmits and congestion window.
func (s *streamSocket) take() (syscall.RawConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, frc, err := detach(s.sconn, s.raw())
	if err != nil {
		return nil, err
	}
	s.own = f
	s.live.Store(&rawHolder{frc})
	s.sconn.Close()
	return frc, nil
}

// shutdownWrite sends the end of stream on a socket outside the poller.
func shutdownWrite(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil {
		return err
	}
	return serr
}
