package measure

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From linux/mptcp.h; x/sys/unix has SOL_MPTCP but not the option.
const (
	solMPTCP   = 284 // SOL_MPTCP
	mptcpInfo1 = 1   // MPTCP_INFO
)

// struct mptcp_info's offsets (linux/mptcp.h, Linux 6.10): six __u8 from
// 0, mptcpi_flags at 8, ..., mptcpi_retransmits at 44,
// mptcpi_bytes_retrans at 48, _sent 56, _received 64, _acked 72,
// mptcpi_subflows_total at 80; 96 bytes in all. An older kernel writes
// fewer: optlen says how many, and what it left is 0.
const mptcpInfoSize = 96

func mptcpInfo(rc syscall.RawConn) (MPTCPInfo, error) {
	var (
		b    [mptcpInfoSize]byte
		n    = uint32(len(b))
		gerr error
	)
	if err := rc.Control(func(fd uintptr) {
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, solMPTCP, mptcpInfo1,
			uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&n)), 0)
		if e != 0 {
			gerr = e
		}
	}); err != nil {
		return MPTCPInfo{}, fmt.Errorf("mptcp_info: %w", err)
	}
	if gerr != nil {
		return MPTCPInfo{}, fmt.Errorf("mptcp_info: %w", gerr)
	}
	le := binary.NativeEndian
	mi := MPTCPInfo{
		Subflows:      int(b[0]),
		AddAddrSignal: int(b[1]),
		AddAddrAccept: int(b[2]),
		SubflowsMax:   int(b[3]),
		Retransmits:   int64(le.Uint32(b[44:])),
		BytesRetrans:  int64(le.Uint64(b[48:])),
		BytesSent:     int64(le.Uint64(b[56:])),
		BytesReceived: int64(le.Uint64(b[64:])),
		BytesAcked:    int64(le.Uint64(b[72:])),
	}
	// mptcpi_subflows counts the additional subflows; _total (6.10) the
	// first one too.
	if n > 80 && b[80] > 0 {
		mi.Subflows = int(b[80])
	}
	return mi, nil
}
