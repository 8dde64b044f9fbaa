//go:build !wirespeed_portable

package engine

import (
	"crypto/rand"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// detach takes the socket out of Go's poller: it makes a duplicate of the
// descriptor, with dup(2) rather than through os.File (which would
// register the duplicate with the poller again); the caller closes the
// connection once the duplicate is where its readers look, which removes
// the original from the poller's epoll set.
// Left registered, every answer that made the socket readable woke a
// thread parked in the poller for nothing: a context switch per
// transaction, which cost a third of the transaction rate on two cores.
func detach(c net.Conn, rc syscall.RawConn) (*fdFile, syscall.RawConn, error) {
	var nfd int
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, nil, fmt.Errorf("detach socket: %w", err)
	}
	if derr != nil {
		return nil, nil, fmt.Errorf("detach socket: %w", derr)
	}
	f := &fdFile{fd: nfd}
	return f, f, nil
}

// fdFile is a socket descriptor the loop owns outright, outside Go's
// poller. It is its own syscall.RawConn for Control (TCP_INFO, socket
// options); Read and Write are not used.
type fdFile struct {
	fd   int
	once sync.Once
}

func (f *fdFile) Control(fn func(fd uintptr)) error { fn(uintptr(f.fd)); return nil }
func (f *fdFile) Read(func(fd uintptr) bool) error  { return ErrUnsupported }
func (f *fdFile) Write(func(fd uintptr) bool) error { return ErrUnsupported }

// SyscallConn gives the descriptor to what sets socket options.
func (f *fdFile) SyscallConn() (syscall.RawConn, error) { return f, nil }

// Close closes the descriptor once.
func (f *fdFile) Close() error {
	var err error
	f.once.Do(func() { err = unix.Close(f.fd) })
	return err
}

// finishRR tells the peer a request/response client is done: a write
// shutdown on TCP, empty datagrams on UDP.
func finishRR(rc syscall.RawConn, udp bool) error {
	var ferr error
	err := rc.Control(func(fd uintptr) {
		if !udp {
			ferr = unix.Shutdown(int(fd), unix.SHUT_WR)
			return
		}
		for range 3 {
			unix.Write(int(fd), nil)
			time.Sleep(time.Millisecond)
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

// blockingFD switches the socket behind rc to blocking mode with a
// receive and send timeout of pollInterval, so that the exchange is a
// plain blocking read and write like netperf's, waking up now and then to
// look at the stop flag. The returned function undoes it. The descriptor
// stays valid until the connection is closed, which its owner does only
// after the loop returned. The loop runs on a thread of its own
// (ownFiles): a blocking call holds it.
func blockingFD(rc syscall.RawConn) (int, func(), error) {
	var fd int
	var serr error
	err := rc.Control(func(f uintptr) {
		fd = int(f)
		tv := unix.NsecToTimeval(int64(pollInterval))
		if serr = unix.SetNonblock(fd, false); serr != nil {
			return
		}
		if serr = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); serr != nil {
			return
		}
		serr = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	})
	if err == nil {
		err = serr
	}
	undo := func() {
		rc.Control(func(f uintptr) {
			var zero unix.Timeval
			unix.SetsockoptTimeval(int(f), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &zero)
			unix.SetsockoptTimeval(int(f), unix.SOL_SOCKET, unix.SO_SNDTIMEO, &zero)
			unix.SetNonblock(int(f), true)
		})
	}
	if err != nil {
		undo()
		return 0, nil, err
	}
	return fd, undo, nil
}

// writeAll writes b on a blocking fd, riding out the poll timeouts; false
// with a nil error when stopped.
func (b *base) writeAll(fd int, p []byte) (bool, error) {
	for len(p) > 0 {
		n, err := rawWrite(fd, p)
		if n > 0 {
			p = p[n:]
		}
		switch err {
		case nil:
		case unix.EAGAIN, unix.EINTR:
			// A poll timeout, or a signal (the Go runtime's preemption
			// signal interrupts a raw blocking call every 10ms): look at
			// the stop flag before blocking again.
			if b.stopped() {
				return false, nil
			}
		default:
			return false, err
		}
	}
	return true, nil
}

// exchangeIO reads or writes all of p on a blocking fd. Stopped before
// any byte moved, it gives up (false, nil) unless started is set; once a
// byte moved it finishes, stop or not, for at most a second, so that a
// request is never half sent nor a response half read.
func (r *RRClient) exchangeIO(fd int, p []byte, io func(int, []byte) (int, error), started bool) (bool, error) {
	var deadline time.Time
	for len(p) > 0 {
		n, err := io(fd, p)
		switch {
		case n > 0:
			p, started = p[n:], true
		case err == nil:
			r.markEnded()
			return false, nil
		case err == unix.EAGAIN || err == unix.EINTR:
			if !r.stopped() {
				continue
			}
			if !started {
				return false, nil
			}
			if deadline.IsZero() {
				deadline = time.Now().Add(time.Second)
			} else if time.Now().After(deadline) {
				return false, fmt.Errorf("a transaction stalled for a second after the stop")
			}
		default:
			return false, err
		}
	}
	return true, nil
}

// readFull reads len(p) bytes from a blocking fd; it reports false with a
// nil error when stopped, and end of stream through ended.
func (b *base) readFull(fd int, p []byte) (bool, error) {
	for len(p) > 0 {
		n, err := rawRead(fd, p)
		switch {
		case n > 0:
			p = p[n:]
		case err == nil:
			b.markEnded()
			return false, nil
		case err == unix.EAGAIN || err == unix.EINTR:
			if b.stopped() {
				return false, nil
			}
		default:
			return false, err
		}
	}
	return true, nil
}

// exchange is the client's loop: send a request, wait for its response,
// record the time between, with burst requests in flight.
func (r *RRClient) exchange() error {
	fd, undo, err := blockingFD(r.rc)
	if err != nil {
		return err
	}
	defer undo()
	return ownFiles(fd, func() error { return r.exchangeOn(fd) })
}

// exchangeOn is exchange's loop on the blocking fd.
func (r *RRClient) exchangeOn(fd int) error {
	epoch := time.Now()
	reqBuf := make([]byte, r.req)
	rand.Read(reqBuf)
	respBuf := make([]byte, max(r.resp, 65536))
	elen := echoLen(r.req, r.resp)
	fl := newInflight(r.burst)
	var seq uint64

	send := func() (bool, error) {
		if r.udp {
			// The sequence number's low bytes go where the server
			// echoes them from: the first elen bytes (the request's
			// first 8 would put its high bytes there when the response
			// is shorter).
			putSeq(reqBuf, seq, elen)
			if r.pace != nil {
				r.pace.wait(len(reqBuf), r.stopped)
			}
			fl.push(seq, int64(time.Since(epoch)))
			seq++
			_, err := rawWrite(fd, reqBuf)
			switch err {
			case nil, unix.EINTR, unix.EAGAIN, unix.ENOBUFS, unix.ECONNREFUSED:
				if err != nil {
					r.ctr.sendErrors.Add(1)
				}
				return !r.stopped(), nil
			}
			return false, err
		}
		fl.push(seq, int64(time.Since(epoch)))
		seq++
		// A request once begun is written whole, stop or not: half a
		// request would leave the server waiting for the rest.
		return r.exchangeIO(fd, reqBuf, rawWrite, true)
	}
	for range r.burst {
		if ok, err := send(); !ok {
			return err
		}
	}
	for !r.stopped() {
		if !r.udp {
			ok, err := r.exchangeIO(fd, respBuf[:r.resp], rawRead, false)
			if !ok {
				if err == nil && r.stopped() {
					r.drain(fd, fl, respBuf, elen)
				}
				return err
			}
			_, at := fl.pop()
			r.done(at, int64(time.Since(epoch)))
			r.ctr.calls.Add(1)
		} else {
			n, err := rawRead(fd, respBuf)
			now := int64(time.Since(epoch))
			switch err {
			case nil:
			case unix.ECONNREFUSED:
				continue
			case unix.EAGAIN, unix.EINTR:
				// No answer within the poll interval, or a signal (the
				// runtime's preemption signal comes every 10ms and would
				// keep the poll timeout from ever expiring): give up on the
				// oldest request if it is overdue, and send another.
				if fl.n > 0 && now-fl.at[fl.head] > int64(udpRRTimeout) {
					fl.pop()
					r.ctr.timeouts.Add(1)
					if ok, err := send(); !ok {
						return err
					}
				}
				continue
			default:
				return err
			}
			r.ctr.calls.Add(1)
			if n < elen {
				continue
			}
			at, ok := fl.take(getSeq(respBuf, elen), elen)
			if !ok {
				continue // the answer to a request given up on
			}
			r.done(at, now)
		}
		if ok, err := send(); !ok {
			if err == nil && r.stopped() {
				r.drain(fd, fl, respBuf, elen)
			}
			return err
		}
	}
	r.drain(fd, fl, respBuf, elen)
	return nil
}

// drain reads the answers to the requests still in flight when the loop
// was stopped, for at most drainPolls poll intervals, so that the client's
// count of completed transactions over the run matches the server's. They
// are outside the window: the latency is not recorded.
func (r *RRClient) drain(fd int, fl *inflight, respBuf []byte, elen int) {
	const drainPolls = 20
	for polls := 0; fl.n > 0 && polls < drainPolls; {
		var n int
		var err error
		if r.udp {
			n, err = rawRead(fd, respBuf)
		} else {
			n, err = rawRead(fd, respBuf[:r.resp])
			for err == nil && n > 0 && n < r.resp {
				var m int
				m, err = rawRead(fd, respBuf[n:r.resp])
				if err == unix.EAGAIN || err == unix.EINTR {
					polls++
					err = nil
					if polls >= drainPolls {
						return
					}
				}
				if m > 0 {
					n += m
				}
			}
		}
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			// A signal every 10ms would otherwise restart the wait
			// forever: count it as a poll too.
			polls++
			continue
		case err != nil || n == 0:
			return
		}
		if r.udp {
			if n < elen {
				continue
			}
			if _, ok := fl.take(getSeq(respBuf, elen), elen); !ok {
				continue
			}
		} else {
			fl.pop()
		}
		r.ctr.packets.Add(1)
	}
}

// answer is the server's loop: read a request, write its response.
func (r *RRServer) answer() error {
	fd, undo, err := blockingFD(r.rc)
	if err != nil {
		return err
	}
	defer undo()
	return ownFiles(fd, func() error { return r.answerOn(fd) })
}

// answerOn is answer's loop on the blocking fd.
func (r *RRServer) answerOn(fd int) error {
	reqBuf := make([]byte, max(r.req, 65536))
	respBuf := make([]byte, r.resp)
	rand.Read(respBuf)
	elen := echoLen(r.req, r.resp)
	first := true
	for !r.stopped() {
		if r.udp {
			n, err := rawRead(fd, reqBuf)
			switch err {
			case nil:
			case unix.EINTR, unix.EAGAIN, unix.ECONNREFUSED:
				continue
			default:
				return err
			}
			if n == 0 {
				r.markEnded() // the client's end of stream
				return nil
			}
			if first {
				first = false
				r.markFirst()
			}
			copy(respBuf[:elen], reqBuf[:min(elen, n)])
			if r.pace != nil {
				r.pace.wait(len(respBuf), r.stopped)
			}
			if _, err := rawWrite(fd, respBuf); err != nil && err != unix.EAGAIN && err != unix.ENOBUFS && err != unix.ECONNREFUSED {
				return err
			}
		} else {
			ok, err := r.readFull(fd, reqBuf[:r.req])
			if !ok {
				return err
			}
			if first {
				first = false
				r.markFirst()
			}
			if ok, err := r.writeAll(fd, respBuf); !ok {
				return err
			}
		}
		r.ctr.calls.Add(1)
		r.answered()
	}
	return nil
}

// rawRead and rawWrite are recvfrom(2) and sendto(2) without telling the
// Go scheduler: the locked thread blocks in the kernel holding its P, as a
// C program's thread would. Through the scheduler (unix.Read), every
// blocking exchange handed the P off and back and woke other threads, and
// the context switches halved the transaction rate on two cores. The
// caller owns a P of its own for the loop (see RequestResponseProcs), and
// its socket has a receive timeout, so the thread comes back to Go code at
// least every pollInterval. The cost of the raw block: to Go the blocked
// goroutine is running, and one that has run on the same scheduler tick
// for 10 ms (a locked loop always has) is preempted by sysmon: a SIGURG,
// EINTR out of the call, a locked-thread hand-off, every 10 ms per loop.
// For a loop that mostly waits that fixed cost is most of its CPU, so a
// TCP stream receiver that waits long waits through rawReadNow and
// waitRead instead.
//
// They call syscall.RawSyscall6, not x/sys/unix's: unix.RawSyscall6 is an
// assembly jump to it, reached through the ABI0 wrapper the jump needs,
// two calls more per message (2.5% of a 64-byte sender's CPU samples).
//
// They are recvfrom and sendto with no address and no flags, as netperf
// calls recv and send, rather than read(2) and write(2): the same one call
// per message, without the VFS layer's file position lock and fsnotify
// hook (vfs_write, sock_write_iter, fdget_pos took 8.6% of a 1 KiB
// TCP_STREAM sender's CPU samples, __sys_sendto and fdget 6.9% of
// netperf's).
func rawRead(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(ptr), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// rawReadNow is rawRead with MSG_DONTWAIT: what is queued, or EAGAIN at
// once. waitRead is the blocking recvfrom through the scheduler
// (syscall.Syscall6: entersyscall and exitsyscall, no thread switch when
// the P is still there or another is idle). A TCP stream receiver that
// waits long (receiveCopy's slow mode) calls rawReadNow and, only when
// nothing is queued, waitRead: while it waits its goroutine is in a
// system call to Go, which sysmon does not signal (it may take the P
// away; the loop takes an idle one back on return, and AddProcs keeps one
// for each loop). At 64 receivers of 20 Mbit/s on one server the server's
// signals fell from about 2,800 a second to 35 and its context switches
// from 14,600 to 6,300. Not for RR: its reads nearly always wait, and the
// failed attempt would be one more system call per transaction.
func rawReadNow(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(ptr), uintptr(len(p)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func waitRead(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := syscall.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(ptr), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(ptr), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// keep duplicates the descriptor with dup(2), outside Go's poller.
func keep(c net.Conn) (KeptSocket, error) {
	rcc, ok := c.(rawConn)
	if !ok {
		return nil, fmt.Errorf("data connection %T has no raw socket", c)
	}
	rc, err := rcc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return &fdFile{fd: nfd}, nil
}
