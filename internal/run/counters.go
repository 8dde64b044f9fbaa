package run

// Counters is how much the kernel's protocol counters (/proc/net/snmp and
// /proc/net/netstat) changed over a window on one host. The named fields
// are the ones a result shows; All keeps every counter so a reader can
// look at any other.
//
// The counters are per network namespace and count every socket in it, not
// only the test's: on a busy host the deltas include other traffic.
type Counters struct {
	TCP    TCPCounters    `json:"tcp"`
	UDP    UDPCounters    `json:"udp"`
	TCPExt TCPExtCounters `json:"tcp_ext"`
	// All is the change of every counter both readings had, keyed by the
	// kernel's "Prefix.Name": "Tcp.RetransSegs", "TcpExt.TCPTimeouts",
	// "IpExt.InOctets". Gauges such as Tcp.CurrEstab are included as they
	// are: their change, not their value.
	All map[string]int64 `json:"all,omitempty"`
}

// TCPCounters are the changes of the "Tcp:" counters of /proc/net/snmp.
type TCPCounters struct {
	InSegs       int64 `json:"in_segs"`
	OutSegs      int64 `json:"out_segs"`
	RetransSegs  int64 `json:"retrans_segs"`
	InErrs       int64 `json:"in_errs"`
	InCsumErrors int64 `json:"in_csum_errors"`
}

// UDPCounters are the changes of the "Udp:" counters of /proc/net/snmp.
type UDPCounters struct {
	InDatagrams  int64 `json:"in_datagrams"`
	InErrors     int64 `json:"in_errors"`
	RcvbufErrors int64 `json:"rcvbuf_errors"`
	SndbufErrors int64 `json:"sndbuf_errors"`
	InCsumErrors int64 `json:"in_csum_errors"`
}

// TCPExtCounters are the changes of the retransmission counters under
// "TcpExt:" in /proc/net/netstat.
type TCPExtCounters struct {
	LostRetransmit   int64 `json:"lost_retransmit"`    // TCPLostRetransmit
	FastRetrans      int64 `json:"fast_retrans"`       // TCPFastRetrans
	SlowStartRetrans int64 `json:"slow_start_retrans"` // TCPSlowStartRetrans
	Timeouts         int64 `json:"timeouts"`           // TCPTimeouts: retransmission timer expiries
	SACKRecovery     int64 `json:"sack_recovery"`      // TCPSackRecovery: recoveries entered with SACK
}

// ChecksumErrors is the number of TCP segments and UDP datagrams the host
// received with a bad checksum. Non-zero over a run is worth calling out:
// it is how a NIC that computes wrong checksums (broken offload, often with
// jumbo frames) shows up.
func (c Counters) ChecksumErrors() int64 {
	return c.TCP.InCsumErrors + c.UDP.InCsumErrors
}
