package netconf

import (
	"fmt"
	"os"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/netdev"
)

// linkDevice changes a device through netdev (features) and a netlink
// handle (MTU), both opened in the device's namespace.
type linkDevice struct {
	name string
	nd   *netdev.Client
	nl   *netlink.Handle
}

func openDevice(opts Options) (device, error) {
	if opts.Dev == "" {
		return nil, fmt.Errorf("no device named: say which interface to change")
	}
	ns := opts.Netns
	if ns <= 0 {
		ns = netns.None()
	}
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in namespace %s: %w", nsLabel(opts), err)
	}
	if _, err := nl.LinkByName(opts.Dev); err != nil {
		nl.Close()
		return nil, fmt.Errorf("interface %q in namespace %s: %w", opts.Dev, nsLabel(opts), err)
	}
	nd, err := netdev.Open(ns)
	if err != nil {
		nl.Close()
		return nil, err
	}
	return &linkDevice{name: opts.Dev, nd: nd, nl: nl}, nil
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

func (d *linkDevice) features() (netdev.Features, error) { return d.nd.Features(d.name) }

func (d *linkDevice) setFeatures(want map[string]bool) error { return d.nd.SetFeatures(d.name, want) }

func (d *linkDevice) mtu() (int, error) {
	l, err := d.nl.LinkByName(d.name)
	if err != nil {
		return 0, err
	}
	return l.Attrs().MTU, nil
}

func (d *linkDevice) setMTU(n int) error {
	l, err := d.nl.LinkByName(d.name)
	if err != nil {
		return err
	}
	return d.nl.LinkSetMTU(l, n)
}

func (d *linkDevice) close() {
	d.nd.Close()
	d.nl.Close()
}

// raise sends sig to this process again.
func raise(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), s)
	}
}
