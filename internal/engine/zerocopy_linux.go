//go:build !wirespeed_portable

package engine

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func (s *TCPSender) useSendfile() error {
	s.mode = sendFile
	return nil
}

func (s *TCPSender) useMsgZeroCopy() error {
	err := withFD(s.conn, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1)
	})
	if err != nil {
		return &optError{"set SO_ZEROCOPY", err}
	}
	s.mode = sendMsgZeroCopy
	s.zc = &zeroCopy{}
	return nil
}

// zcReapEvery is how many zero-copy sends the loop makes between reads of
// the error queue. The kernel merges the completions of consecutive sends
// into one notification while it waits to be read, so reading rarely
// costs few system calls; reading at all keeps the notifications from
// filling the socket's option memory (net.core.optmem_max), at which
// point sends fail with ENOBUFS.
const zcReapEvery = 64

// zeroCopy is a MSG_ZEROCOPY sender's completion reader: a message header
// and control buffer reused for every read of the error queue, so the
// loop allocates nothing.
type zeroCopy struct {
	msg    unix.Msghdr
	ctrl   [128]byte
	unread int // sends since the error queue was last read
}

// reap reads every completion waiting on fd's error queue and adds them to
// the counters; it returns how many sends they completed.
func (z *zeroCopy) reap(fd int, c *counters) int64 {
	z.unread = 0
	var total int64
	for {
		z.msg.Control = &z.ctrl[0]
		z.msg.SetControllen(len(z.ctrl))
		z.msg.Flags = 0
		_, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&z.msg)), unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return total // EAGAIN: none left
		}
		done, copied := parseZeroCopy(z.ctrl[:z.msg.Controllen])
		total += done
		c.zcDone.Add(done)
		c.zcCopied.Add(copied)
	}
}

// parseZeroCopy reads the MSG_ZEROCOPY completions in the control messages
// of one error-queue read: each names the range of send numbers [lo, hi]
// the kernel is done with, and SO_EE_CODE_ZEROCOPY_COPIED says it copied
// them after all.
func parseZeroCopy(b []byte) (done, copied int64) {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(b) {
			break
		}
		recverr := (h.Level == unix.SOL_IP && h.Type == unix.IP_RECVERR) ||
			(h.Level == unix.SOL_IPV6 && h.Type == unix.IPV6_RECVERR)
		if recverr && l >= unix.SizeofCmsghdr+int(unsafe.Sizeof(unix.SockExtendedErr{})) {
			ee := (*unix.SockExtendedErr)(unsafe.Pointer(&b[unix.SizeofCmsghdr]))
			if ee.Origin == unix.SO_EE_ORIGIN_ZEROCOPY && ee.Errno == 0 {
				n := int64(ee.Data-ee.Info) + 1 // 32-bit send numbers wrap
				done += n
				if ee.Code&unix.SO_EE_CODE_ZEROCOPY_COPIED != 0 {
					copied += n
				}
			}
		}
		b = nextCmsg(b, l)
	}
	return done, copied
}

// nextCmsg returns what follows a control message of length l at the
// start of b: the next one starts at l rounded up to the alignment of a
// pointer, and the last one need not be padded.
func nextCmsg(b []byte, l int) []byte {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return b[min((l+a-1)&^(a-1), len(b)):]
}

// sendMsgZeroCopy is the MSG_ZEROCOPY hot loop: one send(2) per message,
// like send, with the error queue read every zcReapEvery sends, before the
// loop parks, and when the kernel's notification memory is full.
func (s *TCPSender) sendMsgZeroCopy() error {
	buf, ring, size := s.payload.buf, s.payload.ring, s.size
	z := s.zc
	off := 0
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for !s.stop.Load() {
			r, _, e := unix.Syscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&buf[off])), uintptr(size), unix.MSG_ZEROCOPY|unix.MSG_DONTWAIT, 0, 0)
			if e == 0 && r > 0 {
				n := int(r)
				s.ctr.bytes.Add(int64(n))
				s.ctr.calls.Add(1)
				off = (off + n) % ring
				if z.unread++; z.unread >= zcReapEvery {
					z.reap(int(fd), &s.ctr)
				}
			}
			switch e {
			case 0:
			case unix.EAGAIN:
				z.reap(int(fd), &s.ctr)
				return false // park until writable; a completion wakes it too
			case unix.ENOBUFS:
				// Too many completions unread or outstanding: read them,
				// or wait for the next one (it raises EPOLLERR, which
				// wakes a writer parked in the poller).
				if z.reap(int(fd), &s.ctr) == 0 {
					return false
				}
			case unix.EINTR:
			default:
				werr = e
				return true
			}
		}
		return true
	})
	if werr != nil {
		return werr
	}
	if isTimeout(err) && s.stopped() {
		return nil
	}
	return err
}

// completionWait bounds how long Finish waits for the completions of the
// last zero-copy sends: the kernel reports them when the peer has
// acknowledged the data, which the receiver's drain brings about.
const completionWait = 2 * time.Second

// awaitCompletions reads completions until every zero-copy send is
// accounted for, or completionWait has passed.
func (s *TCPSender) awaitCompletions() {
	if s.mode != sendMsgZeroCopy || s.zc == nil {
		return
	}
	deadline := time.Now().Add(completionWait)
	for {
		s.rc.Control(func(fd uintptr) { s.zc.reap(int(fd), &s.ctr) })
		if s.ctr.zcDone.Load() >= s.ctr.calls.Load() || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// sendFile is the sendfile(2) hot loop: one call per message from the
// payload's memfd at the ring offset, which wraps like send's.
func (s *TCPSender) sendFile() error {
	mfd, err := payloadMemfd(s.payload)
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	ring, size := int64(s.payload.ring), s.size
	var off int64 // the payload offset; sendfile advances it
	var werr error
	err = s.rc.Write(func(fd uintptr) bool {
		for !s.stop.Load() {
			r, _, e := unix.Syscall6(unix.SYS_SENDFILE, fd, uintptr(mfd), uintptr(unsafe.Pointer(&off)), uintptr(size), 0, 0)
			switch {
			case e == 0 && r > 0:
				s.ctr.bytes.Add(int64(r))
				s.ctr.calls.Add(1)
				if off >= ring {
					off %= ring
				}
			case e == 0:
				werr = fmt.Errorf("sendfile moved nothing at offset %d of the payload", off)
				return true
			case e == unix.EAGAIN:
				return false
			case e == unix.EINTR:
			default:
				werr = fmt.Errorf("sendfile: %w", e)
				return true
			}
		}
		return true
	})
	if werr != nil {
		return werr
	}
	if isTimeout(err) && s.stopped() {
		return nil
	}
	return err
}

// payloadMemfd returns a memfd holding p's whole buffer (the ring and the
// copy of its head), so that any ring offset starts a message of up to
// p.max bytes in the file, as in memory.
func payloadMemfd(p *Payload) (int, error) {
	fd, err := unix.MemfdCreate("wirespeed-payload", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("memfd for sendfile: %w", err)
	}
	for off := 0; off < len(p.buf); {
		n, err := unix.Pwrite(fd, p.buf[off:], int64(off))
		if err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("write the payload to its memfd: %w", err)
		}
		off += n
	}
	return fd, nil
}
