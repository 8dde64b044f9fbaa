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
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
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
	m := &Mesh{Name: cfg.Name, Hosts: meshHosts(cfg), Switch: MeshNamespace(cfg.Name, meshSwitch), RateBitsPerSecond: map[string]uint64{}}
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

	swNs, sw, err := open(m.Switch)
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
		rate := cfg.RateBitsPerSecond[string(host.Name)]
		pl, err := sw.LinkByName(port)
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", port, m.Switch, err)
		}
		if pl.Attrs().MasterIndex == 0 {
			if err := sw.LinkSetMaster(pl, br); err != nil {
				return nil, fmt.Errorf("%s into bridge %s: %w", port, meshBridge, err)
			}
		}
		// The switch's end: the same features and rate, no address.
		if _, _, err := setUpHost(sw, swNs, Host{Netns: m.Switch, Dev: port}, hostSetup{features: cfg.Features, rate: rate, queue: cfg.Queue}); err != nil {
			return nil, err
		}
		if rate > 0 {
			m.RateBitsPerSecond[string(host.Name)] = rate
		}

		link, limit, err := setUpHost(h, ns, *host, hostSetup{
			addrs:    []netip.Prefix{netip.PrefixFrom(host.IPv4, cfg.IPv4.Bits()), netip.PrefixFrom(host.IPv6, cfg.IPv6.Bits())},
			features: cfg.Features,
			rate:     rate,
			queue:    cfg.Queue,
		})
		if err != nil {
			return nil, err
		}
		host.RateBitsPerSecond, host.QueueBytes = rate, limit
		m.MTU = link.Attrs().MTU
	}
	return m, nil
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
	// The servers lab up started keep their hosts alive: stop them first,
	// by their records, whether or not the namespace is still there.
	if entries, err := os.ReadDir(StateDir); err == nil {
		for _, e := range entries {
			host, ok := strings.CutPrefix(e.Name(), name+".")
			if !ok {
				continue
			}
			if host, ok := strings.CutSuffix(host, ".json"); ok && meshNsRe.MatchString(MeshNamespace(name, host)) {
				errs = append(errs, stopServerAs(meshState(name, host)))
				if err := os.Remove(LogPath(meshState(name, host))); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
	}
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
	if err := os.Remove(meshKeyPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
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
	return l.Do(m.Hosts[i].Name, fn)
}

func (m *Mesh) start(i int, cmd *exec.Cmd) error {
	return m.Do(i, cmd.Start)
}

func loadMesh(name string) (*Mesh, error) {
	names, err := meshNamespaces(name)
	if err != nil {
		return nil, err
	}
	m := &Mesh{Name: name, Switch: MeshNamespace(name, meshSwitch), RateBitsPerSecond: map[string]uint64{}}
	for _, nsName := range names {
		mm := meshNsRe.FindStringSubmatch(nsName)
		if mm == nil || mm[2] == meshSwitch {
			continue
		}
		// Read the host as a two-host lab's side called by its name.
		i, _ := strconv.Atoi(mm[2][1:])
		host := Host{Name: HostName(mm[2]), Netns: nsName, Dev: meshHostDevice(i - 1)}
		mtu, err := readHost(name, &host)
		if err != nil {
			return nil, err
		}
		m.MTU = mtu
		if host.RateBitsPerSecond > 0 {
			m.RateBitsPerSecond[mm[2]] = host.RateBitsPerSecond
		}
		m.Hosts = append(m.Hosts, host)
	}
	if len(m.Hosts) == 0 {
		return nil, fmt.Errorf("%w: mesh %s; make it with wirespeed lab up --name %s --hosts 3", ErrNotFound, name, name)
	}
	sort.Slice(m.Hosts, func(i, j int) bool {
		a, _ := strconv.Atoi(string(m.Hosts[i].Name[1:]))
		b, _ := strconv.Atoi(string(m.Hosts[j].Name[1:]))
		return a < b
	})
	for i, h := range m.Hosts {
		if h.Name != HostName(MeshHostName(i)) {
			return nil, fmt.Errorf("mesh lab %s is broken: %s is missing; remove it with wirespeed lab down --name %s", name, MeshNamespace(name, MeshHostName(i)), name)
		}
	}
	return m, nil
}
