package measure

import "syscall"

// MPTCPInfo is the kernel's MPTCP_INFO of a Multipath TCP connection
// (struct mptcp_info, linux/mptcp.h): its subflows and the bytes and
// retransmissions of the connection as a whole, at the data level,
// over all its subflows.
type MPTCPInfo struct {
	Subflows      int   `json:"subflows"`        // subflows open now, the first one included from Linux 6.10 (mptcpi_subflows_total)
	SubflowsMax   int   `json:"subflows_max"`    // the path manager's limit of additional subflows
	AddAddrSignal int   `json:"add_addr_signal"` // addresses this side announced (ADD_ADDR)
	AddAddrAccept int   `json:"add_addr_accepted"`
	Retransmits   int64 `json:"retransmits"`    // data-level retransmissions (Linux 6.5 and later)
	BytesRetrans  int64 `json:"bytes_retrans"`  // (Linux 6.5 and later, as the bytes below)
	BytesSent     int64 `json:"bytes_sent"`     // data-level bytes sent, retransmissions included
	BytesReceived int64 `json:"bytes_received"` // data-level bytes received in order
	BytesAcked    int64 `json:"bytes_acked"`
}

// ReadMPTCPInfo reads MPTCP_INFO through rc. A connection that fell back
// to TCP, or a kernel without MPTCP, gives an error; a platform other
// than Linux ErrUnsupported.
func ReadMPTCPInfo(rc syscall.RawConn) (MPTCPInfo, error) { return mptcpInfo(rc) }
