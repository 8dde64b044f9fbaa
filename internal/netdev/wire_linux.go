package netdev

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The device's own counters and its qdisc's come over rtnetlink through
// vishvananda/netlink (RTM_GETLINK's IFLA_STATS64, RTM_GETQDISC's
// TCA_STATS2). The driver's statistics (ethtool -S) go through the
// SIOCETHTOOL ioctl (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS
// for the ETH_SS_STATS string set): ethtool netlink, and so
// github.com/mdlayher/ethtool v0.7.0, has only the standard statistics
// groups (eth-phy, eth-mac, rmon), not a driver's own counters, which is
// where TSO, checksum and GRO counts live.

// ethSSStats is ETH_SS_STATS, the string set of a driver's statistics.
const (
	ethSSStats = 1
	maxStats   = 1 << 16
)

func (c client) wire(dev string, withEthtool bool) (WireCounters, error) {
	var wc WireCounters
	if c.nl == nil {
		return wc, &opError{"counters", dev, fmt.Errorf("rtnetlink: %w", c.nlErr)}
	}
	link, err := c.nl.LinkByName(dev)
	if err != nil {
		return wc, &opError{"counters", dev, err}
	}
	wc.Loopback = link.Attrs().Flags&net.FlagLoopback != 0
	if s := link.Attrs().Statistics; s != nil {
		wc.Link = LinkCounters{
			TxPackets: s.TxPackets, TxBytes: s.TxBytes, RxPackets: s.RxPackets, RxBytes: s.RxBytes,
			TxDropped: s.TxDropped, RxDropped: s.RxDropped, TxErrors: s.TxErrors, RxErrors: s.RxErrors,
			RxMissed: s.RxMissedErrors, RxOverErrs: s.RxOverErrors,
		}
	} else {
		return wc, &opError{"counters", dev, fmt.Errorf("the kernel sent no IFLA_STATS64")}
	}
	if q, err := c.rootQdisc(link); err == nil {
		wc.Qdisc = q
	}
	if withEthtool {
		// A driver without statistics (lo) refuses with EOPNOTSUPP; that
		// is not an error of the reading.
		if st, err := c.ethtoolStats(dev); err == nil {
			wc.Ethtool = st
		}
	}
	return wc, nil
}

func (c client) qdisc(dev string) (*QdiscCounters, error) {
	if c.nl == nil {
		return nil, &opError{"qdisc", dev, fmt.Errorf("rtnetlink: %w", c.nlErr)}
	}
	link, err := c.nl.LinkByName(dev)
	if err != nil {
		return nil, &opError{"qdisc", dev, err}
	}
	return c.rootQdisc(link)
}

func (c client) rootQdisc(link netlink.Link) (*QdiscCounters, error) {
	qs, err := c.nl.QdiscList(link)
	if err != nil {
		return nil, &opError{"qdisc", link.Attrs().Name, err}
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT {
			continue
		}
		qc := &QdiscCounters{Kind: q.Type()}
		if s := a.Statistics; s != nil {
			if s.Basic != nil {
				qc.SentBytes, qc.SentPackets = s.Basic.Bytes, s.Basic.Packets
			}
			if s.Queue != nil {
				qc.Drops, qc.Overlimits, qc.Requeues = s.Queue.Drops, s.Queue.Overlimits, s.Queue.Requeues
				qc.BacklogBytes, qc.BacklogPackets = s.Queue.Backlog, s.Queue.Qlen
			}
		}
		return qc, nil
	}
	return nil, &opError{"qdisc", link.Attrs().Name, fmt.Errorf("no root qdisc")}
}

// ethtoolStats reads the driver's statistics of dev (ethtool -S) and
// keeps those OffloadStat names.
func (c client) ethtoolStats(dev string) (map[string]uint64, error) {
	names, err := c.stringSet(dev, ethSSStats)
	if err != nil {
		return nil, &opError{"ethtool statistics", dev, err}
	}
	n := len(names)
	if n == 0 {
		return nil, nil
	}
	// struct ethtool_stats: cmd, n_stats, u64 data[n_stats].
	buf := make([]byte, 8+8*n)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GSTATS)
	ne.PutUint32(buf[4:], uint32(n))
	if _, err := c.ethtoolIoctl(dev, buf); err != nil {
		return nil, &opError{"ethtool statistics", dev, err}
	}
	if got := int(ne.Uint32(buf[4:])); got < n {
		n = got
	}
	out := map[string]uint64{}
	for i, name := range names[:n] {
		if OffloadStat(name) {
			out[name] = ne.Uint64(buf[8+8*i:])
		}
	}
	return out, nil
}

// allEthtoolStats reads every statistic of dev, by name (for tests).
func (c client) allEthtoolStats(dev string) (map[string]uint64, error) {
	names, err := c.stringSet(dev, ethSSStats)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8+8*len(names))
	ne.PutUint32(buf[0:], unix.ETHTOOL_GSTATS)
	ne.PutUint32(buf[4:], uint32(len(names)))
	if _, err := c.ethtoolIoctl(dev, buf); err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for i, name := range names[:min(len(names), int(ne.Uint32(buf[4:])))] {
		out[name] = ne.Uint64(buf[8+8*i:])
	}
	return out, nil
}

// stringSet reads the names of string set ss of dev (ETHTOOL_GSSET_INFO
// for its length, ETHTOOL_GSTRINGS for the names).
func (c client) stringSet(dev string, ss uint32) ([]string, error) {
	info := make([]byte, 24)
	ne.PutUint32(info[0:], unix.ETHTOOL_GSSET_INFO)
	ne.PutUint64(info[8:], 1<<ss)
	if _, err := c.ethtoolIoctl(dev, info); err != nil {
		return nil, err
	}
	if ne.Uint64(info[8:])&(1<<ss) == 0 {
		return nil, nil
	}
	n := int(ne.Uint32(info[16:]))
	if n < 0 || n > maxStats {
		return nil, fmt.Errorf("kernel reports %d strings in set %d, expected at most %d", n, ss, maxStats)
	}
	if n == 0 {
		return nil, nil
	}
	return c.gstrings(dev, ss, n)
}
