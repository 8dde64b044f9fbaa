//go:build !wirespeed_portable

package engine

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loop is the TCP_CRR client on a locked OS thread with plain blocking
// system calls: socket, connect, write, read, read the server's close,
// close. Go's net package would register every short-lived socket with
// its poller; this is the transaction netperf times. The calls are raw
// (see rawRead): through the scheduler, every connect and read that
// blocked let sysmon hand the P off and wake another thread.
func (c *CRRClient) loop() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ap, err := netip.ParseAddrPort(c.addr)
	if err != nil {
		ta, rerr := net.ResolveTCPAddr(c.network, c.addr)
		if rerr != nil {
			return fmt.Errorf("TCP_CRR server %s: %w", c.addr, rerr)
		}
		ap = ta.AddrPort()
	}
	sa := newRawSockaddr(ap)
	var local unix.Sockaddr
	if a := c.opts.LocalAddr.Unmap(); a.IsValid() {
		// -B: every transaction's socket binds to it, ephemeral port.
		if a.Is4() && sa.domain == unix.AF_INET {
			local = &unix.SockaddrInet4{Addr: a.As4()}
		} else if sa.domain == unix.AF_INET6 {
			local = &unix.SockaddrInet6{Addr: c.opts.LocalAddr.As16()}
		} else {
			return fmt.Errorf("TCP_CRR: the bind address %s (-B) and the server's address %s are of different IP versions", c.opts.LocalAddr, ap.Addr())
		}
	}
	epoch := time.Now()
	req := make([]byte, c.req)
	rand.Read(req)
	resp := make([]byte, max(c.resp, 4096))
	tv := unix.NsecToTimeval(int64(crrConnectTimeout))
	for !c.stopped() {
		start := int64(time.Since(epoch))
		r, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(sa.domain), unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if e != 0 {
			return fmt.Errorf("TCP_CRR socket: %w", e)
		}
		fd := int(r)
		ok, err := c.transaction(fd, &sa, local, &tv, req, resp)
		rawClose(fd)
		if err != nil {
			return err
		}
		if ok {
			c.done(start, int64(time.Since(epoch)))
			c.ctr.calls.Add(1)
		}
	}
	return nil
}

// rawSockaddr is a socket address in the kernel's form, made once for
// every connect(2) of the loop.
type rawSockaddr struct {
	domain int
	sa     unix.RawSockaddrInet6 // or a RawSockaddrInet4 in its first bytes
	len    uint32
}

func newRawSockaddr(ap netip.AddrPort) rawSockaddr {
	var r rawSockaddr
	port := (*[2]byte)(unsafe.Pointer(&r.sa.Port)) // network byte order
	port[0], port[1] = byte(ap.Port()>>8), byte(ap.Port())
	if a := ap.Addr().Unmap(); a.Is4() {
		r.domain, r.len = unix.AF_INET, unix.SizeofSockaddrInet4
		r.sa.Family = unix.AF_INET
		(*unix.RawSockaddrInet4)(unsafe.Pointer(&r.sa)).Addr = a.As4()
	} else {
		r.domain, r.len = unix.AF_INET6, unix.SizeofSockaddrInet6
		r.sa.Family = unix.AF_INET6
		r.sa.Addr = a.As16()
	}
	return r
}

// peerAddr is the address of a sockaddr accept(2) filled in.
func peerAddr(rsa *unix.RawSockaddrAny) netip.Addr {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		return netip.AddrFrom4((*unix.RawSockaddrInet4)(unsafe.Pointer(rsa)).Addr)
	case unix.AF_INET6:
		return netip.AddrFrom16((*unix.RawSockaddrInet6)(unsafe.Pointer(rsa)).Addr).Unmap()
	}
	return netip.Addr{}
}

func rawClose(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

func rawSetTimeout(fd, opt int, tv *unix.Timeval) {
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, uintptr(opt), uintptr(unsafe.Pointer(tv)), unsafe.Sizeof(*tv), 0)
}

// transaction runs one TCP_CRR transaction on the new socket fd; false
// with a nil error when it timed out or was stopped.
func (c *CRRClient) transaction(fd int, sa *rawSockaddr, local unix.Sockaddr, tv *unix.Timeval, req, resp []byte) (bool, error) {
	if err := setSockOpts(uintptr(fd), c.opts); err != nil {
		return false, err
	}
	if c.opts.NoDelay {
		one := int32(1)
		unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, uintptr(unsafe.Pointer(&one)), 4, 0)
	}
	if local != nil {
		if err := unix.Bind(fd, local); err != nil {
			return false, fmt.Errorf("TCP_CRR bind to %s (-B): %w", c.opts.LocalAddr, err)
		}
	}
	rawSetTimeout(fd, unix.SO_SNDTIMEO, tv)
	rawSetTimeout(fd, unix.SO_RCVTIMEO, tv)
	for interrupted := false; ; {
		_, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa.sa)), uintptr(sa.len))
		if e == 0 || (interrupted && e == unix.EISCONN) {
			break
		}
		switch e {
		case unix.EINTR, unix.EALREADY:
			// A signal interrupted the connect; the handshake goes on in
			// the kernel: ask again until it is done.
			interrupted = true
			if c.stopped() {
				return false, nil
			}
			runtime.Gosched()
			continue
		case unix.EINPROGRESS, unix.EAGAIN, unix.ETIMEDOUT:
			c.ctr.timeouts.Add(1)
			return false, nil
		}
		return false, fmt.Errorf("TCP_CRR connect: %w", e)
	}
	// Once connected, finish the transaction even when the loop is being
	// stopped: a connection closed before its request is how the client
	// tells the server the test is over, and every transaction the server
	// answers is one the client must count. The socket's timeouts bound
	// each wait, and a second bounds the waits a signal cut short.
	var deadline time.Time
	interrupted := func() bool {
		runtime.Gosched() // see the accept loop of CRRServer.loop
		if deadline.IsZero() {
			deadline = time.Now().Add(crrConnectTimeout)
		}
		return time.Now().Before(deadline)
	}
	for p := req; len(p) > 0; {
		n, err := rawWrite(fd, p)
		switch {
		case n > 0:
			p = p[n:]
		case err == unix.EINTR && interrupted():
		case err == unix.EAGAIN || err == unix.EINTR:
			c.ctr.timeouts.Add(1)
			return false, nil
		default:
			return false, fmt.Errorf("TCP_CRR: %w", err)
		}
	}
	for got := 0; got < c.resp; {
		n, err := rawRead(fd, resp[got:c.resp])
		switch {
		case n > 0:
			got += n
		case err == nil:
			return false, fmt.Errorf("TCP_CRR: the server closed before its response")
		case err == unix.EINTR && interrupted():
		case err == unix.EAGAIN || err == unix.EINTR:
			c.ctr.timeouts.Add(1)
			return false, nil
		default:
			return false, fmt.Errorf("TCP_CRR: %w", err)
		}
	}
	// Wait for the server's close, so the server holds the TIME_WAIT and
	// this side's ports are free for the next connections.
	for {
		n, err := rawRead(fd, resp)
		if n == 0 && err == nil {
			return true, nil
		}
		if err != nil && err != unix.EINTR {
			return err == unix.EAGAIN, nil
		}
		runtime.Gosched()
	}
}

// detach takes the listener out of Go's poller, as detach does for a
// request/response socket: left registered, every connection coming in
// woke the thread parked in the poller for nothing. The duplicate blocks,
// with pollInterval as its receive and send timeouts, which accept(2)
// obeys and every accepted socket inherits.
func (sh *CRRShared) detach() error {
	var nfd int
	var derr error
	if err := sh.rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return fmt.Errorf("detach listener: %w", err)
	}
	if derr != nil {
		return fmt.Errorf("detach listener: %w", derr)
	}
	tv := unix.NsecToTimeval(int64(pollInterval))
	err := unix.SetNonblock(nfd, false)
	if err == nil {
		err = unix.SetsockoptTimeval(nfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	if err == nil {
		err = unix.SetsockoptTimeval(nfd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	}
	if err != nil {
		unix.Close(nfd)
		return fmt.Errorf("detach listener: %w", err)
	}
	sh.ln.Close()
	sh.lfd = nfd
	return nil
}

// shutListener shuts the listener down, which wakes every accept(2)
// blocked on it.
func (sh *CRRShared) shutListener() { unix.Shutdown(sh.lfd, unix.SHUT_RDWR) }

func (sh *CRRShared) closeListener() error { return unix.Close(sh.lfd) }

// loop is one TCP_CRR server loop: accept, read the request, write the
// response, close; raw calls on a locked thread, like the client's. Every
// accepted socket has the listener's timeouts already.
func (s *CRRServer) loop() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lfd := uintptr(s.sh.lfd)
	req := make([]byte, s.req)
	resp := make([]byte, s.resp)
	rand.Read(resp)
	first := true
	var rsa unix.RawSockaddrAny
	for !s.stopped() && !s.sh.ended.Load() {
		rlen := uint32(unix.SizeofSockaddrAny)
		r, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, lfd, uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&rlen)), unix.SOCK_CLOEXEC, 0, 0)
		nfd := int(r)
		switch {
		case e == 0:
		case s.stopped() || s.sh.ended.Load():
			// Stop or the client's end shut the listener down.
			return nil
		case e == unix.EAGAIN || e == unix.EINTR || e == unix.ECONNABORTED:
			// A poll timeout or a signal: yield, for the signal may be
			// the runtime asking for the P (a stop-the-world), which
			// nothing in this loop of raw calls would otherwise give it.
			runtime.Gosched()
			continue
		default:
			return fmt.Errorf("TCP_CRR accept: %w", e)
		}
		if peerAddr(&rsa) != s.sh.peer {
			s.ctr.sendErrors.Add(1)
			rawClose(nfd)
			continue
		}
		if s.sh.busyPoll > 0 {
			unix.SetsockoptInt(nfd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, s.sh.busyPoll)
		}
		n, err := rawRead(nfd, req)
		// The request may come later than the poll interval on a loaded
		// machine: wait for it until stopped, or the client, which has
		// connected, gets its request refused with a reset.
		for (err == unix.EAGAIN || err == unix.EINTR) && !s.stopped() {
			runtime.Gosched()
			n, err = rawRead(nfd, req)
		}
		if n == 0 && err == nil {
			// A connection closed before any request: the client's end.
			s.sh.ended.Store(true)
			s.sh.shut()
			rawClose(nfd)
			return nil
		}
		if first && n > 0 {
			first = false
			s.markFirst()
		}
		ok := n > 0
		if ok && n < s.req {
			ok, _ = s.readFull(nfd, req[n:])
		}
		if ok {
			if ok, _ = s.writeAll(nfd, resp); ok {
				s.ctr.packets.Add(1)
				s.ctr.calls.Add(1)
			}
		}
		rawClose(nfd)
	}
	return nil
}
