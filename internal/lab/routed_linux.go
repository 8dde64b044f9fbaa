package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/measure"
)

func upRouted(ctx context.Context, cfg RoutedConfig) (*Routed, error) {
	for _, s := range []HostName{A, Router, B} {
		if _, err := os.Stat(netnsDir + "/" + Namespace(cfg.Name, s)); err == nil {
			return nil, fmt.Errorf("%w: %s; remove it first", ErrExists, Namespace(cfg.Name, s))
		}
	}
	var created []string
	r, err := routedUp(ctx, cfg, &created)
	if err != nil {
		errs := []error{err}
		for _, ns := range created {
			errs = append(errs, deleteNamed(ns))
		}
		return nil, errors.Join(errs...)
	}
	return r, nil
}

func routedUp(ctx context.Context, cfg RoutedConfig, created *[]string) (*Routed, error) {
	addr := func(p netip.Prefix, i int) netip.Addr {
		a := p.Addr()
		for range i {
			a = a.Next()
		}
		return a
	}
	l := &Lab{Name: cfg.Name}
	l.A = Host{Name: A, Netns: Namespace(cfg.Name, A), Dev: Device(A), IPv4: addr(RoutedIPv4A, 1)}
	l.B = Host{Name: B, Netns: Namespace(cfg.Name, B), Dev: Device(B), IPv4: addr(RoutedIPv4B, 1)}
	r := &Routed{Lab: l,
		Router:  Host{Name: Router, Netns: Namespace(cfg.Name, Router), Dev: RouterDeviceB, IPv4: addr(RoutedIPv4B, 2)},
		RouterA: Host{Name: Router, Netns: Namespace(cfg.Name, Router), Dev: "wst-ra", IPv4: addr(RoutedIPv4A, 2)},
	}
	ns := map[HostName]netns.NsHandle{}
	nl := map[HostName]*netlink.Handle{}
	defer func() {
		for _, h := range nl {
			h.Close()
		}
		for _, h := range ns {
			h.Close()
		}
	}()
	for _, s := range []HostName{A, Router, B} {
		h, err := newNamed(Namespace(cfg.Name, s))
		if err != nil {
			return nil, err
		}
		*created = append(*created, Namespace(cfg.Name, s))
		ns[s] = h
		if nl[s], err = netlink.NewHandleAt(h); err != nil {
			return nil, fmt.Errorf("netlink in %s: %w", Namespace(cfg.Name, s), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Both pairs made from inside the router, the far ends put straight
	// into the hosts.
	for _, p := range []struct {
		host Host
		rdev string
	}{{l.A, r.RouterA.Dev}, {l.B, r.Router.Dev}} {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: p.rdev}, PeerName: p.host.Dev, PeerNamespace: netlink.NsFd(ns[p.host.Name])}
		if err := nl[Router].LinkAdd(v); err != nil {
			return nil, fmt.Errorf("add veth pair %s/%s: %w", p.rdev, p.host.Dev, err)
		}
	}
	for _, h := range []struct {
		side   HostName
		dev    string
		a      netip.Addr
		subnet netip.Prefix
		via    netip.Addr // default route; invalid for the router
	}{
		{A, l.A.Dev, l.A.IPv4, RoutedIPv4A, r.RouterA.IPv4},
		{Router, r.RouterA.Dev, r.RouterA.IPv4, RoutedIPv4A, netip.Addr{}},
		{Router, r.Router.Dev, r.Router.IPv4, RoutedIPv4B, netip.Addr{}},
		{B, l.B.Dev, l.B.IPv4, RoutedIPv4B, r.Router.IPv4},
	} {
		name := Namespace(cfg.Name, h.side)
		setup := hostSetup{addrs: []netip.Prefix{netip.PrefixFrom(h.a, h.subnet.Bits())}}
		if h.side == Router && (h.dev == r.Router.Dev || cfg.BothWays && h.dev == r.RouterA.Dev) {
			setup.rate, setup.queue = cfg.RateBitsPerSecond, Queue{BurstBytes: cfg.BurstBytes, LimitBytes: cfg.LimitBytes}
		}
		link, limit, err := setUpHost(nl[h.side], ns[h.side], Host{Netns: name, Dev: h.dev}, setup)
		if err != nil {
			return nil, err
		}
		if limit > 0 {
			r.Limit = limit
		}
		if h.via.IsValid() {
			rt := &netlink.Route{LinkIndex: link.Attrs().Index, Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}, Gw: h.via.AsSlice()}
			if err := nl[h.side].RouteAdd(rt); err != nil {
				return nil, fmt.Errorf("route via %s in %s: %w", h.via, name, err)
			}
		}
	}
	// The router's own /proc/sys/net: the sysctl files are the namespace
	// of the thread that opens them, which Do puts in the router's.
	fwd := filepath.Join(measure.DefaultProcRoot, "sys/net/ipv4/ip_forward")
	if err := l.Do(Router, func() error {
		return os.WriteFile(fwd, []byte("1\n"), 0o644)
	}); err != nil {
		return nil, fmt.Errorf("forwarding in %s: %w", r.Router.Netns, err)
	}
	return r, nil
}

// removeRouter removes a routed lab's router namespace, if there is one:
// its links go with it, and with them the hosts' ends.
func removeRouter(name string) error {
	ns := Namespace(name, Router)
	if _, err := os.Stat(netnsDir + "/" + ns); err != nil {
		return nil
	}
	return errors.Join(deleteLink(ns, "wst-ra"), deleteLink(ns, RouterDeviceB), deleteNamed(ns))
}

// RouterQdisc returns the statistics of the tbf on the router's egress
// toward b: packets it sent and dropped.
func (r *Routed) RouterQdisc() (sent, drops uint64, err error) {
	h, err := netns.GetFromName(r.Router.Netns)
	if err != nil {
		return 0, 0, err
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return 0, 0, err
	}
	defer nl.Close()
	link, err := nl.LinkByName(r.Router.Dev)
	if err != nil {
		return 0, 0, err
	}
	qs, err := nl.QdiscList(link)
	if err != nil {
		return 0, 0, err
	}
	for _, q := range qs {
		if t, ok := q.(*netlink.Tbf); ok && t.Statistics != nil && t.Statistics.Queue != nil && t.Statistics.Basic != nil {
			return uint64(t.Statistics.Basic.Packets), uint64(t.Statistics.Queue.Drops), nil
		}
	}
	return 0, 0, fmt.Errorf("no tbf statistics on %s in %s", r.Router.Dev, r.Router.Netns)
}

// hasRouter reports whether the lab called name has a router's
// namespace.
func hasRouter(name string) (bool, error) {
	_, err := os.Stat(filepath.Join(netnsDir, Namespace(name, Router)))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
