package sysinfo

import (
	"net/netip"
)

// Egress returns the interface the route to peer leaves by and its root
// queueing discipline, in the calling thread's network namespace: what a
// socket's pacing meets on its way out.
func Egress(peer netip.Addr) (string, *Qdisc, error) {
	link, err := routeLink(peer)
	if err != nil {
		return "", nil, err
	}
	q, err := rootQdisc(link)
	return link.Attrs().Name, q, err
}
