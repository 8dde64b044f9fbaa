//go:build !linux

package engine

import (
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// loop is the portable TCP_CRR client through net.Dial.
func (c *CRRClient) loop() error {
	epoch := time.Now()
	req := make([]byte, c.req)
	rand.Read(req)
	resp := make([]byte, c.resp)
	d := net.Dialer{Timeout: crrConnectTimeout}
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

// shutListener does nothing: the portable loop polls its listener with a
// deadline.
func shutListener(syscall.RawConn) {}
