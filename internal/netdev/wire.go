package netdev

import (
	"regexp"
	"sort"
)

// WireCounters is a device's counters at one moment: what the kernel
// counted for the device itself (rtnl_link_stats64), for its root qdisc,
// and the driver's ethtool statistics about segmentation, checksums and
// receive offloads. ReadWire takes it; WireDelta.Of subtracts two.
type WireCounters struct {
	Loopback bool // the device is a loopback (IFF_LOOPBACK)
	Link     LinkCounters
	Qdisc    *QdiscCounters // nil when the device has no root qdisc or it could not be read
	Ethtool  map[string]uint64
}

// LinkCounters are the rtnl_link_stats64 fields a test reads: packets and
// bytes each way as the device counted them (a TSO/GSO packet, or a
// GRO-merged one, counts once, with all its bytes), and its drops and
// errors.
type LinkCounters struct {
	TxPackets  uint64 `json:"tx_packets"`
	TxBytes    uint64 `json:"tx_bytes"`
	RxPackets  uint64 `json:"rx_packets"`
	RxBytes    uint64 `json:"rx_bytes"`
	TxDropped  uint64 `json:"tx_dropped"`
	RxDropped  uint64 `json:"rx_dropped"`
	TxErrors   uint64 `json:"tx_errors"`
	RxErrors   uint64 `json:"rx_errors"`
	RxMissed   uint64 `json:"rx_missed"`    // rx_missed_errors: the NIC had no room
	RxOverErrs uint64 `json:"rx_over_errs"` // rx_over_errors: receive ring overflow
}

// QdiscCounters are a root qdisc's statistics (tc -s qdisc): what it
// sent, dropped, throttled and requeued, and what waits in it now.
type QdiscCounters struct {
	Kind           string
	SentBytes      uint64
	SentPackets    uint32
	Drops          uint32
	Overlimits     uint32
	Requeues       uint32
	BacklogBytes   uint32
	BacklogPackets uint32
}

// Wire is how a device's counters changed over a measurement window,
// with the largest qdisc backlog seen at the samples between its ends.
type Wire struct {
	Device string `json:"device"`
	// ElapsedS is the time between the window's first and last reading.
	ElapsedS float64 `json:"elapsed_s"`
	// Loopback is set for the loopback device, where one device carries
	// both directions: every packet sent is received by it too.
	Loopback bool         `json:"loopback,omitempty"`
	Link     LinkCounters `json:"link"`
	Qdisc    *QdiscWire   `json:"qdisc,omitempty"`
	// Ethtool holds the deltas of the driver's statistics whose names
	// speak of segmentation, checksums or receive offloads
	// (OffloadStat); absent where the driver has none (veth, lo).
	Ethtool map[string]int64 `json:"ethtool,omitempty"`
}

// QdiscWire is a root qdisc's change over the window: sent, drops,
// overlimits and requeues are deltas; the backlog is what waited at the
// window's end, and the largest seen at any sample (ends and interval
// ticks).
type QdiscWire struct {
	Kind              string `json:"kind"`
	SentBytes         uint64 `json:"sent_bytes"`
	SentPackets       uint64 `json:"sent_packets"`
	Drops             uint64 `json:"drops"`
	Overlimits        uint64 `json:"overlimits"`
	Requeues          uint64 `json:"requeues"`
	BacklogBytes      uint64 `json:"backlog_bytes"`
	BacklogPackets    uint64 `json:"backlog_packets"`
	MaxBacklogBytes   uint64 `json:"max_backlog_bytes"`
	MaxBacklogPackets uint64 `json:"max_backlog_packets"`
}

// offloadStat matches the ethtool statistics that count segmentation,
// checksum offload and receive coalescing, by the names drivers give
// them (mlx5 tx_tso_packets, rx_csum_complete, rx_gro_packets; ixgbe
// tx_restart_queue is not one; virtio_net has none; i40e
// rx_csum_bad ...).
var offloadStat = regexp.MustCompile(`(?i)(tso|gso|gro|lro|csum|checksum|segment|_seg_|coalesc|tx_tcp_|lso)`)

// OffloadStat reports whether an ethtool statistic's name speaks of
// segmentation, checksums or receive offloads: those Wire keeps.
func OffloadStat(name string) bool { return offloadStat.MatchString(name) }

// Sub is the change from before to c, for counters that only grow; a
// counter that went down (a driver reset, a 32-bit wrap) counts from 0.
func (c LinkCounters) Sub(before LinkCounters) LinkCounters {
	return LinkCounters{
		TxPackets:  sub(c.TxPackets, before.TxPackets),
		TxBytes:    sub(c.TxBytes, before.TxBytes),
		RxPackets:  sub(c.RxPackets, before.RxPackets),
		RxBytes:    sub(c.RxBytes, before.RxBytes),
		TxDropped:  sub(c.TxDropped, before.TxDropped),
		RxDropped:  sub(c.RxDropped, before.RxDropped),
		TxErrors:   sub(c.TxErrors, before.TxErrors),
		RxErrors:   sub(c.RxErrors, before.RxErrors),
		RxMissed:   sub(c.RxMissed, before.RxMissed),
		RxOverErrs: sub(c.RxOverErrs, before.RxOverErrs),
	}
}

func sub(after, before uint64) uint64 {
	if after < before {
		return after
	}
	return after - before
}

// sub32 is sub for the qdisc's 32-bit counters, which wrap: a wrap
// between two readings a window apart is taken as one.
func sub32(after, before uint32) uint64 { return uint64(after - before) }

// WireOf is the change of a device's counters from before to after, with
// the largest backlog among the samples (before and after included).
func WireOf(dev string, elapsedS float64, before, after WireCounters, samples []QdiscCounters) Wire {
	w := Wire{Device: dev, ElapsedS: elapsedS, Loopback: after.Loopback, Link: after.Link.Sub(before.Link)}
	if a, b := after.Qdisc, before.Qdisc; a != nil && b != nil && a.Kind == b.Kind {
		q := &QdiscWire{
			Kind:           a.Kind,
			SentBytes:      sub(a.SentBytes, b.SentBytes),
			SentPackets:    sub32(a.SentPackets, b.SentPackets),
			Drops:          sub32(a.Drops, b.Drops),
			Overlimits:     sub32(a.Overlimits, b.Overlimits),
			Requeues:       sub32(a.Requeues, b.Requeues),
			BacklogBytes:   uint64(a.BacklogBytes),
			BacklogPackets: uint64(a.BacklogPackets),
		}
		for _, s := range append([]QdiscCounters{*a, *b}, samples...) {
			q.MaxBacklogBytes = max(q.MaxBacklogBytes, uint64(s.BacklogBytes))
			q.MaxBacklogPackets = max(q.MaxBacklogPackets, uint64(s.BacklogPackets))
		}
		w.Qdisc = q
	}
	for name, v := range after.Ethtool {
		if b, ok := before.Ethtool[name]; ok {
			if w.Ethtool == nil {
				w.Ethtool = map[string]int64{}
			}
			w.Ethtool[name] = int64(v - b)
		}
	}
	return w
}

// EthtoolNames returns the names in w.Ethtool, sorted.
func (w Wire) EthtoolNames() []string {
	names := make([]string, 0, len(w.Ethtool))
	for n := range w.Ethtool {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Wire reads dev's counters: the device's, its root qdisc's and, with
// withEthtool, the driver's offload statistics (OffloadStat). Take it at a
// measurement window's ends; QdiscCounters between them.
func (c *Client) Wire(dev string, withEthtool bool) (WireCounters, error) {
	return c.c.wire(dev, withEthtool)
}

// QdiscCounters reads the statistics of dev's root qdisc.
func (c *Client) QdiscCounters(dev string) (*QdiscCounters, error) { return c.c.qdisc(dev) }

// EthtoolStats reads every statistic of dev's driver (ethtool -S), by
// name.
func (c *Client) EthtoolStats(dev string) (map[string]uint64, error) {
	return c.c.allEthtoolStats(dev)
}
