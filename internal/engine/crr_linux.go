package engine

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"runtime"
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
		ok, err := c.transaction(fd, sa, &tv, req, resp)
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
func (c *CRRClient) transaction(fd int, sa unix.Sockaddr, tv *unix.Timeval, req, resp []byte) (bool, error) {
	if err := setSockOpts(uintptr(fd), c.opts); err != nil {
		return false, err
	}
	if c.opts.NoDelay {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, tv)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, tv)
	for {
		err := unix.Connect(fd, sa)
		if err == nil {
			break
		}
		switch err {
		case unix.EINTR:
			continue
		case unix.EINPROGRESS, unix.EAGAIN, unix.ETIMEDOUT:
			c.ctr.timeouts.Add(1)
			return false, nil
		}
		return false, fmt.Errorf("TCP_CRR connect: %w", err)
	}
	if ok, err := c.writeAll(fd, req); !ok {
		return false, err
	}
	if ok, err := c.readFull(fd, resp[:c.resp]); !ok {
		if c.Ended() {
			return false, fmt.Errorf("TCP_CRR: the server closed before its response")
		}
		return false, err
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
		tv := unix.NsecToTimeval(int64(pollInterval))
		if serr = unix.SetNonblock(lfd, false); serr == nil {
			serr = unix.SetsockoptTimeval(lfd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		}
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
		switch err {
		case nil:
		case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED:
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
				s.ctr.bytes.Add(int64(s.req + s.resp))
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
