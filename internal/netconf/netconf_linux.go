package netconf

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"wirespeed/internal/netdev"
)

// linkDevice changes a device through netdev (features) and a netlink
// handle (MTU, addresses), both opened in the device's namespace. It
// finds the device by its interface index, resolved once from the name
// it was opened by: an alternative name or a rename during the session
// leave it the same device.
type linkDevice struct {
	index int
	ident string // namespace and index
	nd    *netdev.Client
	nl    *netlink.Handle
}

func openDevice(opts Options) (device, error) {
	if opts.Dev == "" {
		return nil, fmt.Errorf("no device named: say which interface to change")
	}
	ns := opts.Netns
	if ns <= 0 {
		ns = netns.None()
	}
	nsID, err := namespaceID(ns)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w", nsLabel(opts), err)
	}
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in namespace %s: %w", nsLabel(opts), err)
	}
	// The kernel finds a device by any of its names, alternative names
	// included; from here on it is its index.
	link, err := nl.LinkByName(opts.Dev)
	if err != nil {
		nl.Close()
		return nil, fmt.Errorf("interface %q in namespace %s: %w", opts.Dev, nsLabel(opts), err)
	}
	nd, err := netdev.Open(ns)
	if err != nil {
		nl.Close()
		return nil, err
	}
	index := link.Attrs().Index
	return &linkDevice{index: index, ident: fmt.Sprintf("%s/%d", nsID, index), nd: nd, nl: nl}, nil
}

// namespaceID identifies a network namespace by its inode; ns None is the
// calling thread's.
func namespaceID(ns netns.NsHandle) (string, error) {
	if ns.IsOpen() {
		return ns.UniqueId(), nil
	}
	cur, err := netns.Get()
	if err != nil {
		return "", err
	}
	defer cur.Close()
	return cur.UniqueId(), nil
}

func nsLabel(opts Options) string {
	if opts.NetnsName != "" {
		return opts.NetnsName
	}
	if opts.Netns <= 0 {
		return "(current)"
	}
	return opts.Netns.String()
}

func (d *linkDevice) id() string { return d.ident }

func (d *linkDevice) link() (netlink.Link, error) { return d.nl.LinkByIndex(d.index) }

// name is the device's name now, for ethtool, which knows no index.
func (d *linkDevice) name() (string, error) {
	l, err := d.link()
	if err != nil {
		return "", err
	}
	return l.Attrs().Name, nil
}

func (d *linkDevice) features() (netdev.Features, error) {
	n, err := d.name()
	if err != nil {
		return nil, err
	}
	return d.nd.Features(n)
}

func (d *linkDevice) setFeatures(want map[string]bool) error {
	n, err := d.name()
	if err != nil {
		return err
	}
	return d.nd.SetFeatures(n, want)
}

func (d *linkDevice) mtu() (int, error) {
	l, err := d.link()
	if err != nil {
		return 0, err
	}
	return l.Attrs().MTU, nil
}

func (d *linkDevice) setMTU(n int) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	return d.nl.LinkSetMTU(l, n)
}

func (d *linkDevice) addrs() ([]addr, error) {
	l, err := d.link()
	if err != nil {
		return nil, err
	}
	as, err := d.nl.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, err
	}
	out := make([]addr, 0, len(as))
	for _, a := range as {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		ones, _ := a.Mask.Size()
		out = append(out, addr{prefix: netip.PrefixFrom(ip.Unmap(), ones), sys: a})
	}
	return out, nil
}

// The flags an address is added with; the others are its state.
const addFlags = unix.IFA_F_NODAD | unix.IFA_F_HOMEADDRESS | unix.IFA_F_MANAGETEMPADDR | unix.IFA_F_NOPREFIXROUTE | unix.IFA_F_MCAUTOJOIN

func (d *linkDevice) addAddr(a addr) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	na, ok := a.sys.(netlink.Addr)
	if !ok {
		return fmt.Errorf("no record of address %s", a.prefix)
	}
	na.LinkIndex = d.index
	na.Flags &= addFlags
	return d.nl.AddrAdd(l, &na)
}

func (d *linkDevice) close() {
	d.nd.Close()
	d.nl.Close()
}
