package measure

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

func readQdisc(dev string) (QdiscStats, error) {
	link, err := netlink.LinkByName(dev)
	if err != nil {
		return QdiscStats{}, fmt.Errorf("qdisc of %s: %w", dev, err)
	}
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return QdiscStats{}, fmt.Errorf("qdisc of %s: %w", dev, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT {
			continue
		}
		s := QdiscStats{Kind: q.Type()}
		if st := a.Statistics; st != nil {
			if st.Basic != nil {
				s.SentBytes, s.SentPackets = st.Basic.Bytes, uint64(st.Basic.Packets)
			}
			if st.Queue != nil {
				s.BacklogBytes, s.QueueLen = uint64(st.Queue.Backlog), uint64(st.Queue.Qlen)
				s.Drops, s.Requeues = uint64(st.Queue.Drops), uint64(st.Queue.Requeues)
			}
		}
		return s, nil
	}
	return QdiscStats{}, fmt.Errorf("qdisc of %s: no root qdisc", dev)
}
