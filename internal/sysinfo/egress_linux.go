package sysinfo

import (
	"net/netip"
)

// egress finds the route's interface and its root qdisc (Egress).
func egress(peer netip.Addr) (string, *Qdisc, error) {
	link, err := routeLink(peer)
	if err != nil {
		return "", nil, err
	}
	q, err := rootQdisc(link)
	return link.Attrs().Name, q, err
}
