package lab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"sort"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func upMeshLab(ctx context.Context, cfg MeshConfig) (*Mesh, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	names, err := meshNamespaces(cfg.Name)
	if err != nil {
		return nil, err
	}
	if len(names) > 0 {
		return nil, fmt.Errorf("%w: mesh %s (%s); remove it first", ErrExists, cfg.Name, names[0])
	}
	var created []string
	m, err := upMesh(ctx, cfg, &created)
	if err != nil {
		// Remove only what this call made.
		var errs []error
		for _, ns := range created {
			errs = append(errs, deleteNamed(ns))
		}
		if derr := errors.Join(errs...); derr != nil {
			err = errors.Join(err, fmt.Errorf("clean up: %w", derr))
		}
		return nil, fmt.Errorf("mesh lab %q up: %w", cfg.Name, err)
	}
	return m, nil
}

func upMesh(ctx context.Context, cfg MeshConfig, created *[]string) (*Mesh, error) {
	m := &Mesh{Name: cfg.Name, Hosts: meshHosts(cfg), Switch: MeshNamespace(cfg.Name, meshSwitch)}
	var handles []netns.NsHandle
	var nls []*netlink.Handle
	defer func() {
		for _, h := range nls {
			h.Close()
		}
		for _, h := range handles {
			h.Close()
		}
	}()
	open := func(name string) (netns.NsHandle, *netlink.Handle, error) {
		ns, err := newNamed(name)
		if err != nil {
			return ns, nil, err
		}
		*created = append(*created, name)
		handles = append(handles, ns)
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			return ns, nil, fmt.Errorf("netlink in %s: %w", name, err)
		}
		nls = append(nls, h)
		return ns, h, nil
	}

	_, sw, err := open(m.Switch)
	if err != nil {
		return nil, err
	}
	if err := linkUp(sw, "lo", m.Switch); err != nil {
		return nil, err
	}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: meshBridge, MTU: cfg.MTU}}
	if err := sw.LinkAdd(br); err != nil {
		return nil, fmt.Errorf("add bridge %s in %s: %w", meshBridge, m.Switch, err)
	}
	if err := linkUp(sw, meshBridge, m.Switch); err != nil {
		return nil, err
	}

	for i := range m.Hosts {
		host := &m.Hosts[i]
		ns, h, err := open(host.Netns)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Made from inside the switch, with the host's end put straight
		// into the host's namespace.
		port := meshPortDevice(i)
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: port, MTU: cfg.MTU, MasterIndex: br.Attrs().Index},
			PeerName:      host.Dev,
			PeerNamespace: netlink.NsFd(ns),
		}
		if err := sw.LinkAdd(veth); err != nil {
			return nil, fmt.Errorf("add veth pair %s/%s: %w", port, host.Dev, err)
		}
		rate := cfg.RateBitsPerSecond[string(host.Side)]
		pl, err := sw.LinkByName(port)
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", port, m.Switch, err)
		}
		if pl.Attrs().MasterIndex == 0 {
			if err := sw.LinkSetMaster(pl, br); err != nil {
				return nil, fmt.Errorf("%s into bridge %s: %w", port, meshBridge, err)
			}
		}
		if rate > 0 {
			if err := addTBF(sw, pl, rate, pl.Attrs().MTU); err != nil {
				return nil, fmt.Errorf("rate limit on %s in %s: %w", port, m.Switch, err)
			}
		}
		if err := sw.LinkSetUp(pl); err != nil {
			return nil, fmt.Errorf("%s up in %s: %w", port, m.Switch, err)
		}

		if err := linkUp(h, "lo", host.Netns); err != nil {
			return nil, err
		}
		link, err := h.LinkByName(host.Dev)
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", host.Dev, host.Netns, err)
		}
		m.MTU = link.Attrs().MTU
		for _, p := range []netip.Prefix{
			netip.PrefixFrom(host.IPv4, cfg.IPv4.Bits()),
			netip.PrefixFrom(host.IPv6, cfg.IPv6.Bits()),
		} {
			addr := &netlink.Addr{IPNet: ipNet(p)}
			if p.Addr().Is6() {
				addr.Flags = unix.IFA_F_NODAD // as in Up: usable at once
			}
			if err := h.AddrAdd(link, addr); err != nil {
				return nil, fmt.Errorf("address %s on %s in %s: %w", p, host.Dev, host.Netns, err)
			}
		}
		if rate > 0 {
			if err := addTBF(h, link, rate, m.MTU); err != nil {
				return nil, fmt.Errorf("rate limit on %s in %s: %w", host.Dev, host.Netns, err)
			}
		}
		if err := h.LinkSetUp(link); err != nil {
			return nil, fmt.Errorf("%s up in %s: %w", host.Dev, host.Netns, err)
		}
	}
	return m, nil
}

func linkUp(h *netlink.Handle, dev, ns string) error {
	l, err := h.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", dev, ns, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("%s up in %s: %w", dev, ns, err)
	}
	return nil
}

// meshNamespaces returns the namespaces of the mesh lab called name that
// exist, the switch's last.
func meshNamespaces(name string) ([]string, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	var hosts []string
	sw := ""
	for _, e := range entries {
		mm := meshNsRe.FindStringSubmatch(e.Name())
		if mm == nil || mm[1] != name {
			continue
		}
		if mm[2] == meshSwitch {
			sw = e.Name()
		} else {
			hosts = append(hosts, e.Name())
		}
	}
	sort.Strings(hosts)
	if sw != "" {
		hosts = append(hosts, sw)
	}
	return hosts, nil
}

func listMeshes() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list mesh labs: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		if mm := meshNsRe.FindStringSubmatch(e.Name()); mm != nil && !seen[mm[1]] {
			seen[mm[1]] = true
			names = append(names, mm[1])
		}
	}
	sort.Strings(names)
	return names, nil
}

func removeMesh(name string) error {
	names, err := meshNamespaces(name)
	if err != nil {
		return err
	}
	var errs []error
	// The links first: they go at once, even while a process keeps a
	// namespace alive. Deleting the switch's port removes both ends.
	for _, ns := range names {
		if mm := meshNsRe.FindStringSubmatch(ns); mm != nil && mm[2] != meshSwitch {
			errs = append(errs, deleteLink(ns, "wst-"+mm[2]))
		}
	}
	for _, ns := range names {
		errs = append(errs, deleteNamed(ns))
	}
	return errors.Join(errs...)
}

func (m *Mesh) do(i int, fn func() error) error {
	if i < 0 || i >= len(m.Hosts) {
		return fmt.Errorf("mesh lab %s has no host %d", m.Name, i)
	}
	// A mesh host's namespace is named as a lab side called by the
	// host's name would be: reuse Lab.Do.
	l := &Lab{Name: m.Name}
	return l.Do(m.Hosts[i].Side, fn)
}

func (m *Mesh) start(i int, cmd *exec.Cmd) error {
	return m.Do(i, cmd.Start)
}
