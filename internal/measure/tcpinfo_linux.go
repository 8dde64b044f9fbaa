package measure

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

func tcpInfo(rc syscall.RawConn) (TCPInfo, error) {
	var (
		ti   *unix.TCPInfo
		gerr error
	)
	if err := rc.Control(func(fd uintptr) {
		ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return TCPInfo{}, fmt.Errorf("tcp_info: %w", err)
	}
	if gerr != nil {
		return TCPInfo{}, fmt.Errorf("tcp_info: %w", gerr)
	}
	return TCPInfo{
		SndMSS:        int(ti.Snd_mss),
		RcvMSS:        int(ti.Rcv_mss),
		PMTU:          int(ti.Pmtu),
		CwndSegments:  int(ti.Snd_cwnd),
		CwndBytes:     int64(ti.Snd_cwnd) * int64(ti.Snd_mss),
		RTTMicros:     float64(ti.Rtt),
		RTTVarMicros:  float64(ti.Rttvar),
		TotalRetrans:  int64(ti.Total_retrans),
		RcvSpaceBytes: int64(ti.Rcv_space),
		// Linux 4.9 and later; an older kernel's shorter struct leaves
		// them 0.
		BusyTimeMicros:      int64(ti.Busy_time),
		RwndLimitedMicros:   int64(ti.Rwnd_limited),
		SndbufLimitedMicros: int64(ti.Sndbuf_limited),
		BytesAcked:          int64(ti.Bytes_acked),
		BytesReceived:       int64(ti.Bytes_received),
		UnackedSegments:     int64(ti.Unacked),
		NotsentBytes:        int64(ti.Notsent_bytes),
	}, nil
}
