package engine

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// loop is the TCP_CRR client on a locked OS thread with plain blocking
// system calls: socket, connect, write, read, read the server's close,
// close. Go's net package would register every short-lived socket with
// its poller; this is the transaction netperf times.
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
	domain, sa := unix.AF_INET, unix.Sockaddr(nil)
	if a := ap.Addr().Unmap(); a.Is4() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	} else {
		domain = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
	}
	var local unix.Sockaddr
	if a := c.opts.LocalAddr.Unmap(); a.IsValid() {
		// -B: every transaction's socket binds to it, ephemeral port.
		if a.Is4() && domain == unix.AF_INET {
			local = &unix.SockaddrInet4{Addr: a.As4()}
		} else if domain == unix.AF_INET6 {
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
		fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("TCP_CRR socket: %w", err)
		}
		ok, err := c.transaction(fd, sa, local, &tv, req, resp)
		unix.Close(fd)
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

// transaction runs one TCP_CRR transaction on the new socket fd; false
// with a nil error when it timed out or was stopped.
func (c *CRRClient) transaction(fd int, sa, local unix.Sockaddr, tv *unix.Timeval, req, resp []byte) (bool, error) {
	if err := setSockOpts(uintptr(fd), c.opts); err != nil {
		return false, err
	}
	if c.opts.NoDelay {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if local != nil {
		if err := unix.Bind(fd, local); err != nil {
			return false, fmt.Errorf("TCP_CRR bind to %s (-B): %w", c.opts.LocalAddr, err)
		}
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, tv)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, tv)
	for interrupted := false; ; {
		err := unix.Connect(fd, sa)
		if err == nil || (interrupted && err == unix.EISCONN) {
			break
		}
		switch err {
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
		return false, fmt.Errorf("TCP_CRR connect: %w", err)
	}
	// Once connected, finish the transaction even when the loop is being
	// stopped: a connection closed before its request is how the client
	// tells the server the test is over, and every transaction the server
	// answers is one the client must count. The socket's timeouts bound
	// the wait.
	deadline := time.Now().Add(crrConnectTimeout)
	for p := req; len(p) > 0; {
		n, err := unix.Write(fd, p)
		switch {
		case n > 0:
			p = p[n:]
		case err == unix.EINTR && time.Now().Before(deadline):
		case err == unix.EAGAIN || err == unix.EINTR:
			c.ctr.timeouts.Add(1)
			return false, nil
		default:
			return false, fmt.Errorf("TCP_CRR: %w", err)
		}
	}
	for got := 0; got < c.resp; {
		n, err := unix.Read(fd, resp[got:c.resp])
		switch {
		case n > 0:
			got += n
		case err == nil:
			return false, fmt.Errorf("TCP_CRR: the server closed before its response")
		case err == unix.EINTR:
			if time.Now().After(deadline) {
				c.ctr.timeouts.Add(1)
				return false, nil
			}
		case err == unix.EAGAIN:
			c.ctr.timeouts.Add(1)
			return false, nil
		default:
			return false, fmt.Errorf("TCP_CRR: %w", err)
		}
	}
	// Wait for the server's close, so the server holds the TIME_WAIT and
	// this side's ports are free for the next connections.
	for {
		n, err := unix.Read(fd, resp)
		if n == 0 && err == nil {
			return true, nil
		}
		if err != nil && err != unix.EINTR {
			return err == unix.EAGAIN, nil
		}
	}
}

// loop is one TCP_CRR server loop: accept, read the request, write the
// response, close.
func (s *CRRServer) loop() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var lfd int
	var serr error
	s.sh.rc.Control(func(f uintptr) {
		lfd = int(f)
		serr = unix.SetNonblock(lfd, false)
	})
	if serr != nil {
		return serr
	}
	req := make([]byte, s.req)
	resp := make([]byte, s.resp)
	rand.Read(resp)
	first := true
	for !s.stopped() && !s.sh.ended.Load() {
		nfd, sa, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
		switch {
		case err == nil:
		case s.stopped() || s.sh.ended.Load():
			// Stop or the client's end shut the listener down.
			return nil
		case err == unix.EAGAIN || err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		default:
			return fmt.Errorf("TCP_CRR accept: %w", err)
		}
		if !s.allowed(sa) {
			s.ctr.sendErrors.Add(1)
			unix.Close(nfd)
			continue
		}
		if s.sh.busyPoll > 0 {
			unix.SetsockoptInt(nfd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, s.sh.busyPoll)
		}
		tv := unix.NsecToTimeval(int64(pollInterval))
		unix.SetsockoptTimeval(nfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		unix.SetsockoptTimeval(nfd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
		n, err := unix.Read(nfd, req)
		// The request may come later than the poll interval on a loaded
		// machine: wait for it until stopped, or the client, which has
		// connected, gets its request refused with a reset.
		for (err == unix.EAGAIN || err == unix.EINTR) && !s.stopped() {
			n, err = unix.Read(nfd, req)
		}
		if n == 0 && err == nil {
			// A connection closed before any request: the client's end.
			s.sh.ended.Store(true)
			s.sh.shut()
			unix.Close(nfd)
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
		unix.Close(nfd)
	}
	return nil
}

func (s *CRRServer) allowed(sa unix.Sockaddr) bool {
	var a netip.Addr
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		a = netip.AddrFrom4(sa.Addr)
	case *unix.SockaddrInet6:
		a = netip.AddrFrom16(sa.Addr)
	}
	return a.Unmap() == s.sh.peer
}

// shutListener shuts the listener down, which wakes every accept(2)
// blocked on it.
func shutListener(rc syscall.RawConn) {
	rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
}
