//go:build !linux

package engine

import (
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

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
			putSeq(reqBuf, seq, min(r.req, 8))
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
				r.ended.Store(true)
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
			r.ended.Store(true)
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
			b.ended.Store(true)
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

// Keep returns a duplicate of c's socket that keeps it open after c is
// closed.
func Keep(c net.Conn) (KeptSocket, error) {
	fc, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, ErrUnsupported
	}
	return fc.File()
}
