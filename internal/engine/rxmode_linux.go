//go:build !wirespeed_portable

package engine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

func (r *TCPReceiver) useSplice() error {
	r.mode = rxSplice
	return nil
}

func (r *TCPReceiver) useDiscard() error {
	r.mode = rxDiscard
	return nil
}

// receiveSplice is the splice hot loop: socket to pipe, then pipe to
// /dev/null until the pipe is empty again, so that the pipe never holds
// data when the next socket splice starts (a full pipe would read as
// EAGAIN, like an empty socket).
func (r *TCPReceiver) receiveSplice() error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("pipe for splice: %w", err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, splicePipeSize) // best effort, see splicePipeSize
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/null for splice: %w", err)
	}
	defer unix.Close(null)

	var rerr error
	seen := false
	err = r.rc.Read(func(fd uintptr) bool {
		for !r.stop.Load() {
			n, _, e := unix.Syscall6(unix.SYS_SPLICE, fd, 0, uintptr(p[1]), 0, uintptr(r.size), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			switch {
			case e == 0 && n > 0:
				r.ctr.bytes.Add(int64(n))
				r.ctr.calls.Add(1)
				if !seen {
					seen = true
					r.markFirst()
				}
				if e := drainPipe(p[0], null, int(n)); e != 0 {
					rerr = fmt.Errorf("splice from the pipe to /dev/null: %w", e)
					return true
				}
			case e == 0: // end of stream
				r.markEnded()
				return true
			case e == unix.EAGAIN:
				return false
			case e == unix.EINTR:
			default:
				rerr = fmt.Errorf("splice from the socket: %w", e)
				return true
			}
		}
		return true
	})
	if rerr != nil {
		return rerr
	}
	if isTimeout(err) && r.stopped() {
		return nil
	}
	return err
}

// drainPipe splices n bytes from the pipe's read end to /dev/null.
func drainPipe(pr, null, n int) unix.Errno {
	for n > 0 {
		m, _, e := unix.Syscall6(unix.SYS_SPLICE, uintptr(pr), 0, uintptr(null), 0, uintptr(n), unix.SPLICE_F_MOVE)
		switch {
		case e == unix.EINTR:
		case e != 0:
			return e
		case m == 0:
			return unix.EIO // the pipe was said to hold n bytes
		default:
			n -= int(m)
		}
	}
	return 0
}

// receiveDiscard is the MSG_TRUNC hot loop: recv(2) of up to the receive
// size, which the kernel counts and drops. buf is passed to the kernel,
// which does not write to it.
func (r *TCPReceiver) receiveDiscard(buf []byte) error {
	var rerr error
	seen := false
	err := r.rc.Read(func(fd uintptr) bool {
		for !r.stop.Load() {
			n, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), unix.MSG_TRUNC|unix.MSG_DONTWAIT, 0, 0)
			switch {
			case e == 0 && n > 0:
				r.ctr.bytes.Add(int64(n))
				r.ctr.calls.Add(1)
				if !seen {
					seen = true
					r.markFirst()
				}
			case e == 0: // end of stream
				r.markEnded()
				return true
			case e == unix.EAGAIN:
				return false
			case e == unix.EINTR:
			default:
				rerr = e
				return true
			}
		}
		return true
	})
	if rerr != nil {
		return rerr
	}
	if isTimeout(err) && r.stopped() {
		return nil
	}
	return err
}
