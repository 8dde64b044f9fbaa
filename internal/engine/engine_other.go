//go:build !linux || wirespeed_portable

package engine

// Every platform but Linux: the loops go through net.Conn and Go's
// poller, and the data path options are refused with errNoPlatform. This
// file holds all of it, so that the portable files declare the API once
// and the other platforms' side of it is read in one place.

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"
)

// Sockets.

func setSockOpts(fd uintptr, opts Options) error {
	if err := setIPOpts(opts); err != nil {
		return err
	}
	if opts.LocalPort > 0 {
		if err := setReuseAddr(fd); err != nil {
			return fmt.Errorf("set SO_REUSEADDR: %w", err)
		}
	}
	if opts.SockBuf > 0 {
		if err := setsockoptInt(syscall.SetsockoptInt, fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_SNDBUF %d: %w", opts.SockBuf, err)
		}
		if err := setsockoptInt(syscall.SetsockoptInt, fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_RCVBUF %d: %w", opts.SockBuf, err)
		}
	}
	if opts.CongestionControl != "" {
		return fmt.Errorf("choosing the congestion control is supported on Linux only")
	}
	if opts.BusyPollMicros > 0 {
		return fmt.Errorf("busy polling is supported on Linux only")
	}
	return nil
}

// setIPOpts refuses the socket options (sockopts.go) that are Linux's
// alone here (sockopts.go); a local address and port need none, Go binds
// them.
func setIPOpts(opts Options) error {
	switch {
	case opts.BindDev != "":
		return fmt.Errorf("binding to a device (--bind-dev) is supported on Linux only; bind to the device's address with -B: %w", ErrUnsupported)
	case opts.TOS != 0:
		return fmt.Errorf("setting the TOS byte (--tos, --dscp) is supported on Linux only: %w", ErrUnsupported)
	case opts.MSS != 0:
		return fmt.Errorf("setting the TCP MSS (--mss) is supported on Linux only: %w", ErrUnsupported)
	case opts.DontFragment:
		return fmt.Errorf("forbidding fragmentation (--dont-fragment) is supported on Linux only: %w", ErrUnsupported)
	}
	return nil
}

// pathMTU is unknown here (DatagramTooBigError).
func pathMTU(fd uintptr) (mtu, header int, df bool) { return 0, 28, false }

func sockInfo(fd uintptr) (SocketInfo, error) {
	var si SocketInfo
	var err error
	if si.SndBuf, err = getsockoptInt(syscall.GetsockoptInt, fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF); err != nil {
		return si, fmt.Errorf("get SO_SNDBUF: %w", err)
	}
	if si.RcvBuf, err = getsockoptInt(syscall.GetsockoptInt, fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF); err != nil {
		return si, fmt.Errorf("get SO_RCVBUF: %w", err)
	}
	return si, nil
}

func bufInfo(fd uintptr) (SocketInfo, error) { return sockInfo(fd) }

// connectFD connects a UDP socket to peer. Not tried on Windows, where it
// says so.
func connectFD(fd uintptr, peer netip.AddrPort) error {
	if runtime.GOOS == "windows" {
		return ErrUnsupported
	}
	return connectSock(syscall.Getsockname, syscall.Connect, fd, peer)
}

// connectSock is connectFD through the platform's Getsockname and
// Connect, whatever their descriptor type (see sysFD).
func connectSock[F sysFD](getsockname func(F) (syscall.Sockaddr, error), connect func(F, syscall.Sockaddr) error, fd uintptr, peer netip.AddrPort) error {
	a := peer.Addr()
	sa, err := getsockname(F(fd))
	if err != nil {
		return err
	}
	if _, ok := sa.(*syscall.SockaddrInet6); ok {
		return connect(F(fd), &syscall.SockaddrInet6{Port: int(peer.Port()), Addr: a.As16()})
	}
	return connect(F(fd), &syscall.SockaddrInet4{Port: int(peer.Port()), Addr: a.Unmap().As4()})
}

// unsent is Linux only: only Linux tells how much of a socket's sent data
// is unacknowledged.
func unsent(syscall.Conn) (int, error) { return 0, ErrUnsupported }

// TCP streams.

// send is the portable loop through net.Conn.
func (s *TCPSender) send() error {
	buf, ring, stopped := s.payload.buf, s.payload.ring, s.stopped
	var sent int64
	off := 0
	for !s.stop.Load() {
		m, ok := s.nextWrite(sent, stopped)
		if !ok {
			return nil
		}
		n, err := s.conn.Write(buf[off : off+m])
		if n > 0 {
			s.ctr.bytes.Add(int64(n))
			s.ctr.calls.Add(1)
			sent += int64(n)
			off = (off + n) % ring
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

// receive is the portable receive loop through net.Conn.
func (r *TCPReceiver) receive(buf []byte) error {
	seen := false
	for !r.stop.Load() {
		n, err := r.conn.Read(buf)
		if n > 0 {
			r.ctr.bytes.Add(int64(n))
			r.ctr.calls.Add(1)
			if !seen {
				seen = true
				r.markFirst()
			}
		}
		if errors.Is(err, io.EOF) {
			r.markEnded()
			return nil
		}
		if err != nil {
			if isTimeout(err) && r.stopped() {
				return nil
			}
			return err
		}
	}
	return nil
}

// shutdownWrite is not reached on other platforms: their loops keep the
// connection, and closeWrite uses it.
func shutdownWrite(syscall.RawConn) error { return ErrUnsupported }

// UDP streams.

// haveMmsg is false: no send or receive batches here.
const haveMmsg = false

// send is the portable UDP sending loop: one datagram per write.
func (s *UDPSender) send() error {
	buf := make([]byte, s.size)
	copy(buf, s.payload.at(0, s.size))
	start := time.Now()
	var seq uint64
	for {
		n, ok := s.nextSends(start, seq, 1)
		if !ok {
			return nil
		}
		now := int64(time.Since(s.epoch))
		for range n {
			s.hdr.stamp(buf, seq, uint64(now)) // see stampBatch
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
		r.calls++
		if !r.handle(buf[:n], int64(time.Since(r.epoch)), true) {
			r.publish()
			r.markEnded()
			return nil
		}
		r.publish()
	}
	return nil
}

// writeNonblocking writes b on fd once, whatever comes of it.
func writeNonblocking(fd int, b []byte) { writeFD(syscall.Write, uintptr(fd), b) }

// writeFD writes through the platform's Write, whatever its descriptor
// type (see sysFD).
func writeFD[F sysFD](write func(F, []byte) (int, error), fd uintptr, b []byte) (int, error) {
	return write(F(fd), b)
}

// Request/response.

// exchange is the portable client loop through net.Conn.
func (r *RRClient) exchange() error {
	epoch := time.Now()
	reqBuf := make([]byte, r.req)
	rand.Read(reqBuf)
	respBuf := make([]byte, max(r.resp, 65536))
	elen := echoLen(r.req, r.resp)
	fl := newInflight(r.burst)
	var seq uint64
	send := func() error {
		if r.udp {
			// The sequence number's low bytes go where the server
			// echoes them from: the first elen bytes (the request's
			// first 8 would put its high bytes there when the response
			// is shorter).
			putSeq(reqBuf, seq, elen)
			if r.pace != nil {
				r.pace.wait(len(reqBuf), r.stopped)
			}
		}
		fl.push(seq, int64(time.Since(epoch)))
		seq++
		r.conn.SetWriteDeadline(time.Now().Add(pollInterval))
		_, err := r.conn.Write(reqBuf)
		if err != nil && r.udp && !r.stopped() {
			r.ctr.sendErrors.Add(1)
			return nil
		}
		return err
	}
	for range r.burst {
		if err := send(); err != nil {
			return err
		}
	}
	for !r.stopped() {
		r.conn.SetReadDeadline(time.Now().Add(pollInterval))
		var n int
		var err error
		if r.udp {
			n, err = r.conn.Read(respBuf)
		} else {
			var ok bool
			if ok, err = r.readFull(r.conn, respBuf[:r.resp]); !ok {
				return err
			}
		}
		now := int64(time.Since(epoch))
		if isTimeout(err) {
			if r.udp && fl.n > 0 && now-fl.at[fl.head] > int64(udpRRTimeout) {
				fl.pop()
				r.ctr.timeouts.Add(1)
				if err := send(); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.markEnded()
				return nil
			}
			return err
		}
		r.ctr.calls.Add(1)
		at := int64(0)
		if r.udp {
			if n < elen {
				continue
			}
			var ok bool
			if at, ok = fl.take(getSeq(respBuf, elen), elen); !ok {
				continue
			}
		} else {
			_, at = fl.pop()
		}
		r.done(at, now)
		if err := send(); err != nil {
			return err
		}
	}
	return nil
}

// answer is the portable server loop through net.Conn.
func (r *RRServer) answer() error {
	reqBuf := make([]byte, max(r.req, 65536))
	respBuf := make([]byte, r.resp)
	rand.Read(respBuf)
	elen := echoLen(r.req, r.resp)
	first := true
	for !r.stopped() {
		r.conn.SetReadDeadline(time.Now().Add(pollInterval))
		var n int
		var err error
		if r.udp {
			n, err = r.conn.Read(reqBuf)
		} else {
			var ok bool
			if ok, err = r.readFull(r.conn, reqBuf[:r.req]); !ok {
				return err
			}
			n = r.req
		}
		if isTimeout(err) {
			continue
		}
		if errors.Is(err, io.EOF) || (r.udp && err == nil && n == 0) {
			r.markEnded()
			return nil
		}
		if err != nil {
			return err
		}
		if first {
			first = false
			r.markFirst()
		}
		copy(respBuf[:elen], reqBuf[:min(elen, n)])
		if r.pace != nil {
			r.pace.wait(len(respBuf), r.stopped)
		}
		r.conn.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := r.conn.Write(respBuf); err != nil && !r.udp {
			return err
		}
		r.ctr.calls.Add(1)
		r.answered()
	}
	return nil
}

// readFull reads len(p) bytes, keeping what arrived across the poll
// timeouts; false with a nil error when stopped or at end of stream.
func (b *base) readFull(c net.Conn, p []byte) (bool, error) {
	for len(p) > 0 {
		c.SetReadDeadline(time.Now().Add(pollInterval))
		n, err := c.Read(p)
		p = p[n:]
		switch {
		case err == nil:
		case isTimeout(err):
			if b.stopped() {
				return false, nil
			}
		case errors.Is(err, io.EOF):
			b.markEnded()
			return false, nil
		default:
			return false, err
		}
	}
	return true, nil
}

// detach keeps the connection in Go's poller: the portable loops use it.
func detach(_ net.Conn, rc syscall.RawConn) (closer, syscall.RawConn, error) {
	return nil, rc, nil
}

// finishRR is done through the connection on other platforms; see
// RRClient.Finish.
func finishRR(syscall.RawConn, bool) error { return nil }

// keep duplicates the socket through os.File.
func keep(c net.Conn) (KeptSocket, error) {
	fc, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, ErrUnsupported
	}
	return fc.File()
}

// TCP_CRR.

// loop is the portable TCP_CRR client through net.Dial.
func (c *CRRClient) loop() error {
	if err := setIPOpts(c.opts); err != nil {
		return err
	}
	epoch := time.Now()
	req := make([]byte, c.req)
	rand.Read(req)
	resp := make([]byte, c.resp)
	d := net.Dialer{Timeout: crrConnectTimeout, LocalAddr: localAddr(c.network, c.opts)}
	for !c.stopped() {
		start := int64(time.Since(epoch))
		conn, err := d.Dial(c.network, c.addr)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.ctr.timeouts.Add(1)
				continue
			}
			return err
		}
		conn.SetDeadline(time.Now().Add(crrConnectTimeout))
		_, err = conn.Write(req)
		if err == nil {
			_, err = io.ReadFull(conn, resp)
		}
		if err == nil {
			_, err = conn.Read(resp[:1])
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		conn.Close()
		if err != nil {
			c.ctr.timeouts.Add(1)
			continue
		}
		c.done(start, int64(time.Since(epoch)))
		c.ctr.calls.Add(1)
	}
	return nil
}

// loop is the portable TCP_CRR server loop through net.Listener.
func (s *CRRServer) loop() error {
	req := make([]byte, s.req)
	resp := make([]byte, s.resp)
	rand.Read(resp)
	first := true
	for !s.stopped() && !s.sh.ended.Load() {
		s.sh.ln.SetDeadline(time.Now().Add(pollInterval))
		conn, err := s.sh.ln.Accept()
		if err != nil {
			if isTimeout(err) {
				continue
			}
			return err
		}
		ap, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
		if ap.Addr().Unmap() != s.sh.peer {
			s.ctr.sendErrors.Add(1)
			conn.Close()
			continue
		}
		conn.SetDeadline(time.Now().Add(crrConnectTimeout))
		n, err := io.ReadFull(conn, req)
		if n == 0 && errors.Is(err, io.EOF) {
			s.sh.ended.Store(true)
			conn.Close()
			return nil
		}
		if err == nil {
			if first {
				first = false
				s.markFirst()
			}
			if _, err = conn.Write(resp); err == nil {
				s.ctr.packets.Add(1)
				s.ctr.calls.Add(1)
			}
		}
		conn.Close()
	}
	return nil
}

// The portable loop keeps the listener in Go's poller and polls it with a
// deadline: nothing to detach, wake or close beyond the listener itself.
func (sh *CRRShared) detach() error        { return nil }
func (sh *CRRShared) shutListener()        {}
func (sh *CRRShared) closeListener() error { return nil }

// The data path options exist on Linux only; elsewhere they say so.

func notSupported(error) bool { return false }

// zeroCopy is the MSG_ZEROCOPY state, Linux only.
type zeroCopy struct{}

func (s *TCPSender) useSendfile() error            { return errNoPlatform }
func (s *TCPSender) useMsgZeroCopy() error         { return errNoPlatform }
func (s *TCPSender) awaitCompletions()             {}
func (r *TCPReceiver) useSplice() error            { return errNoPlatform }
func (r *TCPReceiver) useDiscard() error           { return errNoPlatform }
func (s *UDPSender) setGSO(int) error              { return errNoPlatform }
func (r *UDPReceiver) enableGRO() error            { return errNoPlatform }
func (r *UDPReceiver) enableRxStamps() error       { return errNoPlatform }
func (r *UDPReceiver) disableRxStamps() error      { return nil }
func (sh *CRRShared) setBusyPoll(int) (int, error) { return 0, errNoPlatform }

func setPacingRate(Socket, uint64) (uint64, error) { return 0, errNoPlatform }
func setBusyPoll(Socket, int) (int, error)         { return 0, errNoPlatform }
func napiID(Socket) (int, error)                   { return 0, errNoPlatform }
func probeBusyPoll(int) (int, error)               { return 0, errNoPlatform }
func pin(int) (Pinning, func(), error)             { return Pinning{}, nil, errNoPlatform }
func checkCPU(int) error                           { return errNoPlatform }

// probeSupport finds none: elsewhere than Linux the options do not exist.
func probeSupport() (Support, error) { return Support{}, nil }

// getsockoptInt reads an int option whatever the descriptor type (see
// sysFD).
func getsockoptInt[F sysFD](get func(F, int, int) (int, error), fd uintptr, level, opt int) (int, error) {
	return get(F(fd), level, opt)
}

// linuxEngine: see sock_linux.go.
const linuxEngine = false
