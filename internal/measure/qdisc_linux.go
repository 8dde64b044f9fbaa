package measure

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsHandle is a netlink socket opened in another namespace.
type netnsHandle = *netlink.Handle

func readQdisc(dev string) (QdiscStats, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return QdiscStats{}, fmt.Errorf("qdisc of %s: %w", dev, err)
	}
	defer h.Close()
	return readQdiscWith(h, dev)
}

// readQdiscWith reads dev's root qdisc through h, in h's namespace.
func readQdiscWith(h *netlink.Handle, dev string) (QdiscStats, error) {
	q, err := rootQdiscOf(h, dev)
	if err != nil {
		return QdiscStats{}, err
	}
	a := q.Attrs()
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

func rootQdiscOf(h *netlink.Handle, dev string) (netlink.Qdisc, error) {
	link, err := h.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("qdisc of %s: %w", dev, err)
	}
	qs, err := h.QdiscList(link)
	if err != nil {
		return nil, fmt.Errorf("qdisc of %s: %w", dev, err)
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			return q, nil
		}
	}
	return nil, fmt.Errorf("qdisc of %s: no root qdisc", dev)
}

func openNetnsQdisc(name, dev string) (*NetnsQdisc, error) {
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink in namespace %s: %w", name, err)
	}
	q, err := rootQdiscOf(h, dev)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	nq := &NetnsQdisc{Netns: name, Dev: dev, Kind: q.Type(), h: h}
	if tbf, ok := q.(*netlink.Tbf); ok {
		nq.RateBitsPerSecond, nq.LimitBytes = tbf.Rate*8, tbf.Limit
	}
	return nq, nil
}

func (q *NetnsQdisc) read() (QdiscStats, error) {
	s, err := readQdiscWith(q.h, q.Dev)
	if err != nil {
		return s, fmt.Errorf("namespace %s: %w", q.Netns, err)
	}
	return s, nil
}

func (q *NetnsQdisc) close() { q.h.Close() }
