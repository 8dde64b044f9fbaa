package lab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"wirespeed/internal/netconf"
	"wirespeed/internal/netdev"
)

// netnsDir is where named namespaces are bind-mounted, as `ip netns` does.
const netnsDir = "/run/netns"

func upLab(ctx context.Context, cfg Config) (*Lab, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, s := range []HostName{A, B} {
		if _, err := os.Stat(filepath.Join(netnsDir, Namespace(cfg.Name, s))); err == nil {
			return nil, fmt.Errorf("%w: %s; remove it with wirespeed lab down --name %s", ErrExists, cfg.Name, cfg.Name)
		}
	}
	created := map[HostName]bool{}
	l, err := up(ctx, cfg, created)
	if err != nil {
		// Remove only what this call made: a lab of the same name that
		// someone else made meanwhile stays.
		var errs []error
		for _, s := range []HostName{A, B} {
			if created[s] {
				errs = append(errs, deleteLink(Namespace(cfg.Name, s), Device(s)), deleteNamed(Namespace(cfg.Name, s)))
			}
		}
		if derr := errors.Join(errs...); derr != nil {
			err = errors.Join(err, fmt.Errorf("clean up: %w", derr))
		}
		return nil, fmt.Errorf("lab %q up: %w", cfg.Name, err)
	}
	return l, nil
}

// up makes the lab, marking in created each namespace it made.
func up(ctx context.Context, cfg Config, created map[HostName]bool) (*Lab, error) {
	l := &Lab{Name: cfg.Name, MTU: cfg.MTU, RateBitsPerSecond: cfg.RateBitsPerSecond}
	a4, b4 := hostAddrs(cfg.IPv4)
	a6, b6 := hostAddrs(cfg.IPv6)
	l.A = Host{Name: A, Netns: Namespace(cfg.Name, A), Dev: Device(A), IPv4: a4, IPv6: a6}
	l.B = Host{Name: B, Netns: Namespace(cfg.Name, B), Dev: Device(B), IPv4: b4, IPv6: b6}

	handles := map[HostName]netns.NsHandle{}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	for _, s := range []HostName{A, B} {
		h, err := newNamed(l.Host(s).Netns)
		if err != nil {
			return nil, err
		}
		created[s] = true
		handles[s] = h
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	nl := map[HostName]*netlink.Handle{}
	defer func() {
		for _, h := range nl {
			h.Close()
		}
	}()
	for _, s := range []HostName{A, B} {
		h, err := netlink.NewHandleAt(handles[s])
		if err != nil {
			return nil, fmt.Errorf("netlink in %s: %w", l.Host(s).Netns, err)
		}
		nl[s] = h
	}

	// Made from inside a, with the peer end put straight into b.
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: l.A.Dev, MTU: cfg.MTU},
		PeerName:      l.B.Dev,
		PeerNamespace: netlink.NsFd(handles[B]),
	}
	if err := nl[A].LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("add veth pair %s/%s: %w", l.A.Dev, l.B.Dev, err)
	}

	for _, s := range []HostName{A, B} {
		rate := cfg.RateBitsPerSecond
		if cfg.OneWay != "" && cfg.OneWay != s {
			rate = 0
		}
		link, limit, err := setUpHost(nl[s], handles[s], l.Host(s), hostSetup{
			addrs:    []netip.Prefix{netip.PrefixFrom(l.Host(s).IPv4, cfg.IPv4.Bits()), netip.PrefixFrom(l.Host(s).IPv6, cfg.IPv6.Bits())},
			features: cfg.Features,
			rate:     rate,
			queue:    cfg.Queue,
		})
		if err != nil {
			return nil, err
		}
		l.MTU = link.Attrs().MTU
		h := l.hostOf(s)
		h.RateBitsPerSecond, h.QueueBytes = rate, limit
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	o := CurrentOwner()
	o.Created = time.Now().UTC().Truncate(time.Second)
	if err := saveOwner(cfg.Name, o); err != nil {
		return nil, err
	}
	return l, nil
}

// newNamed makes a named network namespace. netns.NewNamed moves the
// calling thread into the new namespace, so it runs on a locked thread
// that is thrown away afterwards.
func newNamed(name string) (netns.NsHandle, error) {
	if err := shareNetnsDir(netnsDir); err != nil {
		return netns.None(), fmt.Errorf("make namespace %s: %w", name, err)
	}
	type result struct {
		h   netns.NsHandle
		err error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		h, err := netns.NewNamed(name)
		c <- result{h, err}
	}()
	r := <-c
	if r.err != nil {
		return netns.None(), fmt.Errorf("make namespace %s: %w", name, r.err)
	}
	return r.h, nil
}

// shareNetnsDir makes dir a shared mount point of its own, as iproute2's
// `ip netns add` does before its first namespace, so that the two agree.
// netns.NewNamed bind-mounts namespaces into a plain directory; a later
// `ip netns add` (a test's, a user's) then finds dir not a mount point and
// bind-mounts dir over itself, and every namespace mounted before is
// hidden under that mount: `lab down` can no longer remove it ("device
// or resource busy"). Making dir a mount point first leaves `ip` nothing
// to remount. When dir is not a mount point but already holds live
// namespaces (made by an older wirespeed, or by netns.NewNamed
// elsewhere), upgrading it would hide them in the same way, so it is
// left as it is.
func shareNetnsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Succeeds only on a mount point (EINVAL otherwise), and marks it
	// shared, as iproute2 does.
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	live, err := holdsNamespaces(dir)
	if err != nil || live {
		return err
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s onto itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	return nil
}

// holdsNamespaces reports whether any entry of dir is a mounted namespace
// (a file on nsfs), not the empty placeholder file left where one was.
func holdsNamespaces(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Join(dir, e.Name()), &st); err != nil {
			continue // gone meanwhile
		}
		if st.Type == unix.NSFS_MAGIC {
			return true, nil
		}
	}
	return false, nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), bits)}
}

// hostSetup is what a lab gives a host's end of its link.
type hostSetup struct {
	addrs    []netip.Prefix
	features map[string]bool // ethtool names; none: left as the kernel made them
	rate     uint64          // a tbf at this many bits/s; 0: none
	queue    Queue           // the tbf's queue and bucket; zero: TBF's
}

// setUpHost does what every lab (two-host, mesh, routed) does to a
// host's device, in this order: lo up, the addresses on the device (IPv6
// without duplicate address detection: nothing else is on the link, and
// without it the address is usable at once), the offload features, the
// tbf, the device up. It returns the device's link (up) and the tbf's
// queue in bytes (0 without one).
func setUpHost(h *netlink.Handle, ns netns.NsHandle, host Host, s hostSetup) (netlink.Link, uint32, error) {
	if err := linkUp(h, "lo", host.Netns); err != nil {
		return nil, 0, err
	}
	link, err := h.LinkByName(host.Dev)
	if err != nil {
		return nil, 0, fmt.Errorf("%s in %s: %w", host.Dev, host.Netns, err)
	}
	mtu := link.Attrs().MTU
	for _, p := range s.addrs {
		addr := &netlink.Addr{IPNet: ipNet(p)}
		if p.Addr().Is6() {
			addr.Flags = unix.IFA_F_NODAD
		}
		if err := h.AddrAdd(link, addr); err != nil {
			return nil, 0, fmt.Errorf("address %s on %s in %s: %w", p, host.Dev, host.Netns, err)
		}
	}
	if len(s.features) > 0 {
		if err := setFeatures(ns, host, s.features); err != nil {
			return nil, 0, fmt.Errorf("offloads of %s in %s: %w", host.Dev, host.Netns, err)
		}
	}
	var limit uint32
	if s.rate > 0 {
		if limit, err = addTBF(h, link, s.rate, mtu, s.queue); err != nil {
			return nil, 0, fmt.Errorf("rate limit on %s in %s: %w", host.Dev, host.Netns, err)
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return nil, 0, fmt.Errorf("%s up in %s: %w", host.Dev, host.Netns, err)
	}
	return link, limit, nil
}

// linkUp sets dev up in the namespace ns (named for errors).
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

func setFeatures(ns netns.NsHandle, host Host, features map[string]bool) error {
	names := make([]string, 0, len(features))
	for n := range features {
		names = append(names, n)
	}
	sort.Strings(names)
	var settings []netconf.Setting
	for _, n := range names {
		settings = append(settings, netconf.Feature(n, features[n]))
	}
	// Keep: the lab's settings are meant to stay until it is removed.
	s, err := netconf.Open(netconf.Options{Dev: host.Dev, Netns: ns, NetnsName: host.Netns, Keep: true,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer s.Restore()
	return s.Set(settings...)
}

// addTBF puts a tbf at bitsPerSecond on link, its bucket and queue
// sized by q (Queue.Size), and returns its queue in bytes.
func addTBF(h *netlink.Handle, link netlink.Link, bitsPerSecond uint64, mtu int, queue Queue) (uint32, error) {
	rate, burst, limit, err := queue.Size(bitsPerSecond, mtu)
	if err != nil {
		return 0, err
	}
	q := &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{
			LinkIndex: link.Attrs().Index,
			Handle:    netlink.MakeHandle(1, 0),
			Parent:    netlink.HANDLE_ROOT,
		},
		Rate:   rate,
		Buffer: netlink.Xmittime(rate, burst),
		Limit:  limit,
	}
	return limit, h.QdiscAdd(q)
}

func loadLab(name string) (*Lab, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	l := &Lab{Name: name}
	for _, s := range []HostName{A, B} {
		host := Host{Name: s, Netns: Namespace(name, s), Dev: Device(s)}
		ns, err := netns.GetFromName(host.Netns)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s (namespace %s is missing); make it with wirespeed lab up --name %s", ErrNotFound, name, host.Netns, name)
			}
			return nil, fmt.Errorf("lab %q: open %s: %w", name, host.Netns, err)
		}
		ns.Close()
		mtu, err := readHost(name, &host)
		if err != nil {
			return nil, err
		}
		l.MTU = mtu
		if host.RateBitsPerSecond > 0 {
			l.RateBitsPerSecond = host.RateBitsPerSecond
		}
		if s == A {
			l.A = host
		} else {
			l.B = host
		}
	}
	return l, nil
}

// readHost reads the MTU, addresses and tbf (rate and queue, 0 for none)
// of host's device in its namespace, filling in host's addresses and tbf.
func readHost(name string, host *Host) (mtu int, err error) {
	ns, err := netns.GetFromName(host.Netns)
	if err != nil {
		return 0, fmt.Errorf("lab %q: open %s: %w", name, host.Netns, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return 0, fmt.Errorf("netlink in %s: %w", host.Netns, err)
	}
	defer h.Close()
	link, err := h.LinkByName(host.Dev)
	if err != nil {
		return 0, fmt.Errorf("lab %q is broken: %s in %s: %w; remove it with wirespeed lab down --name %s", name, host.Dev, host.Netns, err, name)
	}
	mtu = link.Attrs().MTU
	addrs, err := h.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return 0, fmt.Errorf("addresses of %s in %s: %w", host.Dev, host.Netns, err)
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || ip.IsLinkLocalUnicast() {
			continue
		}
		ip = ip.Unmap()
		if ip.Is4() && !host.IPv4.IsValid() {
			host.IPv4 = ip
		} else if ip.Is6() && !host.IPv6.IsValid() {
			host.IPv6 = ip
		}
	}
	qs, err := h.QdiscList(link)
	if err != nil {
		return 0, fmt.Errorf("qdiscs of %s in %s: %w", host.Dev, host.Netns, err)
	}
	for _, q := range qs {
		if tbf, ok := q.(*netlink.Tbf); ok && q.Attrs().Parent == netlink.HANDLE_ROOT {
			host.RateBitsPerSecond, host.QueueBytes = tbf.Rate*8, tbf.Limit
		}
	}
	return mtu, nil
}

func listLabs() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list labs: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "wst-") || !(strings.HasSuffix(n, "-a") || strings.HasSuffix(n, "-b")) {
			continue
		}
		name := n[len("wst-") : len(n)-2]
		if CheckName(name) == nil && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func removeLab(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	var errs []error
	// The server lab up started keeps namespace a alive: stop it first.
	if err := StopServer(name); err != nil {
		errs = append(errs, err)
	}
	// Delete the link first: it goes at once, even if some process keeps
	// a namespace alive. Deleting one end removes both.
	for _, s := range []HostName{A, B} {
		if err := deleteLink(Namespace(name, s), Device(s)); err != nil {
			errs = append(errs, err)
		}
	}
	// A routed lab's router (and with it both links).
	if err := removeRouter(name); err != nil {
		errs = append(errs, err)
	}
	for _, s := range []HostName{A, B} {
		if err := deleteNamed(Namespace(name, s)); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range []string{LogPath(name), KeyPath(name), ownerPath(name)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteLink(nsName, dev string) error {
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		return nil // no namespace, no link
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil // a namespace file that is not mounted: deleteNamed removes it
	}
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		return nil // gone already
	}
	if err := h.LinkDel(link); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("delete %s in %s: %w", dev, nsName, err)
	}
	return nil
}

// deleteNamed unmounts and removes a named namespace, tolerating one that
// is missing or was never mounted.
func deleteNamed(name string) error {
	path := filepath.Join(netnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

func (l *Lab) do(s HostName, fn func() error) error {
	name := Namespace(l.Name, s)
	ns, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", name, err)
	}
	defer ns.Close()
	type result struct {
		err      error
		finished bool
		panicked bool
		p        any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked, r.p = true, p
			} else if !r.finished {
				r.err = fmt.Errorf("the function run in %s ended its goroutine (runtime.Goexit, t.FailNow?)", name)
			}
			done <- r
		}()
		if err := netns.Set(ns); err != nil {
			r.err, r.finished = fmt.Errorf("enter namespace %s: %w", name, err), true
			return
		}
		r.err = fn()
		r.finished = true
	}()
	r := <-done
	if r.panicked {
		panic(r.p)
	}
	return r.err
}

func (l *Lab) start(s HostName, cmd *exec.Cmd) error {
	return l.Do(s, cmd.Start)
}

// Offloads reads the offload groups of the host's device in its
// namespace; nil when they cannot be read (no root, a half-removed lab).
func (h Host) Offloads() []netdev.FeatureState {
	ns, err := netns.GetFromName(h.Netns)
	if err != nil {
		return nil
	}
	defer ns.Close()
	nd, err := netdev.Open(ns)
	if err != nil {
		return nil
	}
	defer nd.Close()
	fs, err := nd.Features(h.Dev)
	if err != nil {
		return nil
	}
	return fs.Offloads()
}
