package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/netdev"
)

func (c *collector) collectInterface(ctx context.Context, dev string, peer netip.Addr) (*Interface, error) {
	var (
		link netlink.Link
		err  error
	)
	if dev != "" {
		link, err = netlink.LinkByName(dev)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return nil, fmt.Errorf("interface %q does not exist; list them with ip link", dev)
			}
			return nil, fmt.Errorf("interface %q: %w", dev, err)
		}
	} else {
		link, err = routeLink(peer)
		if err != nil {
			return nil, err
		}
	}
	a := link.Attrs()
	ifc := &Interface{Name: a.Name, Index: a.Index, MTU: a.MTU}

	if q, err := rootQdisc(link); err != nil {
		c.warn("qdisc of %s: %v", a.Name, err)
	} else {
		ifc.Qdisc = q
	}
	if err := ctx.Err(); err != nil {
		return ifc, err
	}

	nd, err := netdev.Open(netns.None())
	if err != nil {
		c.warn("driver, link mode and features of %s: %v", a.Name, err)
		return ifc, nil
	}
	defer nd.Close()
	// The loopback driver answers neither driver info nor link modes;
	// that is no news worth a warning.
	loopback := a.Flags&net.FlagLoopback != 0
	expected := func(err error) bool { return loopback && errors.Is(err, errors.ErrUnsupported) }
	if di, err := nd.DriverInfo(a.Name); err != nil {
		if !expected(err) {
			c.warn("%v", err)
		}
	} else {
		ifc.Driver, ifc.DriverVersion, ifc.Firmware, ifc.BusInfo = di.Driver, di.Version, di.Firmware, di.BusInfo
	}
	if ifc.Driver == "" && loopback {
		ifc.Driver = "loopback"
	}
	if lm, err := nd.LinkMode(a.Name); err != nil {
		if !expected(err) {
			c.warn("%v", err)
		}
	} else {
		ifc.SpeedMbps, ifc.Duplex = lm.SpeedMbps, lm.Duplex
	}
	if fs, err := nd.Features(a.Name); err != nil {
		c.warn("%v", err)
	} else {
		ifc.Offloads = fs.OffloadsFor(peer)
		ifc.Features = fs.Record()
	}
	return ifc, nil
}

// routeLink finds the interface the kernel would send to peer by.
func routeLink(peer netip.Addr) (netlink.Link, error) {
	routes, err := netlink.RouteGet(net.IP(peer.Unmap().AsSlice()))
	if err != nil {
		return nil, fmt.Errorf("find the interface that carries traffic to %s: %w; name it with --dev", peer, err)
	}
	for _, r := range routes {
		if r.LinkIndex <= 0 {
			continue
		}
		link, err := netlink.LinkByIndex(r.LinkIndex)
		if err != nil {
			return nil, fmt.Errorf("interface %d of the route to %s: %w", r.LinkIndex, peer, err)
		}
		return link, nil
	}
	return nil, fmt.Errorf("the route to %s names no interface; name it with --dev", peer)
}

// rootQdisc returns the queueing discipline at the root of link's egress.
func rootQdisc(link netlink.Link) (*Qdisc, error) {
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT {
			continue
		}
		maj, min := netlink.MajorMinor(a.Handle)
		rq := &Qdisc{Kind: q.Type(), Handle: fmt.Sprintf("%x:%x", maj, min)}
		if tbf, ok := q.(*netlink.Tbf); ok {
			rq.RateBitsPerSecond = tbf.Rate * 8
			rq.BurstBytes = netlink.Xmitsize(tbf.Rate, tbf.Buffer)
			rq.LimitBytes = tbf.Limit
		}
		return rq, nil
	}
	return nil, errors.New("no root qdisc")
}
