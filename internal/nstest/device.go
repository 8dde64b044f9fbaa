package nstest

import (
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/netdev"
)

// DeviceState reads dev's MTU (netlink) and the state of its kernel
// features (ethtool) in the named namespace: what a test compares before
// and after code that changes a device and must restore it. It fails t
// if the namespace or the device cannot be read.
func DeviceState(t testing.TB, nsName, dev string) (mtu int, features netdev.Features) {
	t.Helper()
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatalf("open namespace %s: %v", nsName, err)
	}
	defer ns.Close()
	return DeviceStateAt(t, ns, dev)
}

// DeviceStateAt is DeviceState in the namespace ns.
func DeviceStateAt(t testing.TB, ns netns.NsHandle, dev string) (mtu int, features netdev.Features) {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink in %s: %v", ns, err)
	}
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		t.Fatalf("device %s in %s: %v", dev, ns, err)
	}
	nd, err := netdev.Open(ns)
	if err != nil {
		t.Fatalf("ethtool in %s: %v", ns, err)
	}
	defer nd.Close()
	fs, err := nd.Features(dev)
	if err != nil {
		t.Fatalf("features of %s in %s: %v", dev, ns, err)
	}
	return link.Attrs().MTU, fs
}
