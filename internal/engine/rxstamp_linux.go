//go:build !wirespeed_portable

package engine

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Receive timestamps. With SO_TIMESTAMPNS the kernel stamps each datagram
// when it enters the host's receive path (netif_receive_skb, or
// netif_rx for loopback and veth) and hands the stamp to recvmmsg as a
// control message of every message: the datagram's own arrival time,
// whenever the loop gets to read it, where one clock read per recvmmsg
// would give a whole batch the same arrival time and count the time a
// datagram waited in the socket buffer. The stamp is on the wall clock
// (CLOCK_REALTIME): the receiver subtracts its epoch on that clock, so a
// step of the wall clock during a test shows once as a jump in transit,
// and NTP's slewing (at most 500 ppm) is far below what is measured.
//
// The first socket that asks for stamps turns stamping on in the receive
// path through a kernel work queue (net_enable_timestamp): a datagram that
// arrives before that has run, or before the option was set, is stamped
// when it is read instead, as with a clock read. NewUDPReceiver sets the
// option when the socket is set up, well before the data starts.
//
// UDP_GRO joins several datagrams in one buffer with one stamp, when the
// kernel handed the joined buffer up (see UDPReceiver.handleMsg).

// rxControlSpace is a receive's control buffer: room for a timestamp
// (struct __kernel_timespec, two 64-bit fields) and UDP_GRO's int.
var rxControlSpace = unix.CmsgSpace(16) + unix.CmsgSpace(4)

// enableRxStamps asks the kernel for a receive timestamp with every
// datagram: SO_TIMESTAMPNS_NEW (Linux 5.1), whose stamp is two 64-bit
// fields on every architecture, else SO_TIMESTAMPNS, whose stamp is the
// architecture's struct timespec.
func (r *UDPReceiver) enableRxStamps() error {
	return withFD(r.conn, func(fd int) error {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, 1) == nil {
			return nil
		}
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, 1)
	})
}

// disableRxStamps turns the option off: both spellings share one flag,
// which either clears.
func (r *UDPReceiver) disableRxStamps() error {
	return withFD(r.conn, func(fd int) error {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, 0) == nil {
			return nil
		}
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, 0)
	})
}

// rxControl reads the control messages of one received message: the
// segment size of a buffer UDP_GRO joined (0 when it holds one datagram)
// and the kernel's receive timestamp in nanoseconds since 1970, ok false
// when there is none (a truncated control buffer, MSG_CTRUNC).
//
// It is written out here rather than using unix.ParseSocketControlMessage,
// which returns a freshly allocated slice of messages on every call (two
// allocations for the two messages of a GRO receive, one per datagram
// otherwise; measured by TestRxControlAllocs): the loop calls this for
// every datagram, and the hot path allocates nothing per message. A
// malformed buffer ends the walk; nothing here reads past b.
func rxControl(b []byte) (seg int, at int64, ok bool) {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(b) {
			break
		}
		data := b[unix.SizeofCmsghdr:l]
		switch {
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			seg = int(int32(binary.NativeEndian.Uint32(data)))
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS_NEW && len(data) >= 16:
			at, ok = timespecNs(int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:])))
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS_OLD:
			at, ok = oldTimespec(data)
		}
		b = nextCmsg(b, l)
	}
	return max(seg, 0), at, ok
}

// oldTimespec reads the architecture's struct timespec of SO_TIMESTAMPNS:
// two longs.
func oldTimespec(data []byte) (int64, bool) {
	if unsafe.Sizeof(unix.Timespec{}) == 8 {
		if len(data) < 8 {
			return 0, false
		}
		return timespecNs(int64(int32(binary.NativeEndian.Uint32(data))), int64(int32(binary.NativeEndian.Uint32(data[4:]))))
	}
	if len(data) < 16 {
		return 0, false
	}
	return timespecNs(int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:])))
}

// timespecNs is a timestamp in nanoseconds; a zero stamp is none.
func timespecNs(sec, nsec int64) (int64, bool) {
	if sec == 0 && nsec == 0 {
		return 0, false
	}
	return sec*1e9 + nsec, true
}
