package sysinfo

// DataPathSupport is what a host's kernel offers the data path options,
// for its environment record: each feature known from the release it
// appeared in and, for the live host, confirmed by trying it on a
// socket. What a run could actually use is in its result's data path
// records.
type DataPathSupport struct {
	MsgZeroCopy bool `json:"msg_zerocopy"` // SO_ZEROCOPY and MSG_ZEROCOPY on TCP (Linux 4.14)
	UDPGSO      bool `json:"udp_gso"`      // UDP_SEGMENT (4.18)
	UDPGRO      bool `json:"udp_gro"`      // UDP_GRO (5.0)
	// TCPInternalPacing is TCP's own pacing, which enforces
	// SO_MAX_PACING_RATE without the fq qdisc (4.20).
	TCPInternalPacing bool `json:"tcp_internal_pacing"`
	// DefaultQdisc is net.core.default_qdisc, what an mq root gives each
	// queue: fq there paces UDP too.
	DefaultQdisc string `json:"default_qdisc,omitempty"`
	// Probed says the socket options were tried on this host rather than
	// only inferred from the release.
	Probed bool `json:"probed"`
}
