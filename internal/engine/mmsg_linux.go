//go:build !wirespeed_portable

package engine

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveMmsg is whether the platform has sendmmsg and recvmmsg, for a send
// or receive batch.
const haveMmsg = true

// mmsghdr is struct mmsghdr of sendmmsg(2)/recvmmsg(2), which x/sys/unix
// does not wrap: a msghdr and the byte count the kernel fills in, padded
// to the alignment of a pointer.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [unsafe.Sizeof(uintptr(0)) - 4]byte
}

// mmsgBatch is a reusable set of n datagram buffers of size bytes with
// their headers, so that a loop allocates nothing per batch.
type mmsgBatch struct {
	hdrs []mmsghdr
	iovs []unix.Iovec
	bufs [][]byte
	ctrl [][]byte // control buffers, one per datagram, when asked for (withControl)
}

func newMmsgBatch(n, size int) *mmsgBatch {
	b := &mmsgBatch{hdrs: make([]mmsghdr, n), iovs: make([]unix.Iovec, n), bufs: make([][]byte, n)}
	mem := make([]byte, n*size)
	for i := range n {
		b.bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(size)
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.SetIovlen(1)
	}
	return b
}

// withControl gives every datagram of b a control buffer of size bytes,
// for the control messages recvmmsg returns (UDP_GRO's segment size).
func (b *mmsgBatch) withControl(size int) {
	mem := make([]byte, len(b.hdrs)*size)
	b.ctrl = make([][]byte, len(b.hdrs))
	for i := range b.hdrs {
		b.ctrl[i] = mem[i*size : (i+1)*size : (i+1)*size]
		b.hdrs[i].hdr.Control = &b.ctrl[i][0]
	}
}

// sendmmsgRaw is sendmmsg without telling the Go scheduler, for a loop
// that owns its thread and a P (see UDPSender.send).
func (b *mmsgBatch) sendmmsgRaw(fd uintptr, n int) (int, unix.Errno) {
	r, _, e := syscall.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(n), 0, 0, 0)
	return int(r), e
}

// recvmmsgWait receives up to len(b.bufs) datagrams on a blocking fd: it
// waits for the first (as long as the socket's receive timeout) and takes
// what else has arrived without waiting (MSG_WAITFORONE). Raw: the caller
// owns a P and a locked thread (see blockingFD).
func (b *mmsgBatch) recvmmsgWait(fd uintptr) (int, unix.Errno) {
	b.reset()
	r, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(len(b.hdrs)), unix.MSG_WAITFORONE, 0, 0)
	return int(r), e
}

// recvmsgWait is recvmmsgWait for a batch of one: recvmsg(2) of the first
// datagram, its length in the header as recvmmsg would leave it. recvmmsg
// copies in and checks a header array and, with MSG_WAITFORONE, goes round
// its loop again for a second datagram: with one per call that is kernel
// work for nothing, a fifth of the receiver's system CPU at 64 B
// (bench/README.md, "UDP_STREAM: one call per datagram").
func (b *mmsgBatch) recvmsgWait(fd uintptr) (int, unix.Errno) {
	b.reset()
	h := &b.hdrs[0]
	r, _, e := syscall.RawSyscall6(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&h.hdr)), 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	h.len = uint32(r)
	return 1, 0
}

// recvfromWait is recvmsgWait without the control messages: recvfrom(2)
// of the first datagram into the first buffer, as netserver's and
// iperf3's receivers make, for a receiver that times datagrams by its own
// clock (UDPReceiver.SetKernelStamps). No msghdr nor iovec to copy in and
// check, no control message to build and copy out.
func (b *mmsgBatch) recvfromWait(fd uintptr) (int, unix.Errno) {
	buf := b.bufs[0]
	r, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	h := &b.hdrs[0]
	h.len = uint32(r)
	h.hdr.Controllen = 0
	return 1, 0
}

// reset readies the headers for a receive.
func (b *mmsgBatch) reset() {
	for i := range b.hdrs {
		b.iovs[i].SetLen(len(b.bufs[i]))
		b.hdrs[i].hdr.Flags = 0
		if b.ctrl != nil {
			b.hdrs[i].hdr.SetControllen(len(b.ctrl[i]))
		}
	}
}
