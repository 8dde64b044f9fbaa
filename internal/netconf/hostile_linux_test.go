package netconf_test

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/netconf"
	"wirespeed/internal/nstest"
)

// addrsOf lists dev's addresses in namespace nsName through a netlink
// handle of the test's own.
func addrsOf(t *testing.T, nsName, dev string) []netip.Prefix {
	t.Helper()
	h := handleIn(t, nsName)
	link, err := h.LinkByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	as, err := h.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Prefix
	for _, a := range as {
		ip, _ := netip.AddrFromSlice(a.IP)
		ones, _ := a.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return strings.Compare(a.String(), b.String()) })
	return out
}

func handleIn(t *testing.T, nsName string) *netlink.Handle {
	t.Helper()
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func openDev(t *testing.T, nsName, dev string) (*netconf.Session, error) {
	t.Helper()
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	return netconf.Open(netconf.Options{Dev: dev, Netns: ns, NetnsName: nsName, Log: slog.New(slog.DiscardHandler)})
}

func ipv6Of(ps []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range ps {
		if p.Addr().Is6() {
			out = append(out, p)
		}
	}
	return out
}

// TestRestorePutsBackIPv6Addresses: an MTU below 1280 makes the kernel
// remove a device's IPv6 addresses; the restore puts them back, on a
// veth with a static address and on lo with ::1.
func TestRestorePutsBackIPv6Addresses(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	nsName := l.Host(lab.A).Netns
	for _, dev := range []string{l.Host(lab.A).Dev, "lo"} {
		t.Run(dev, func(t *testing.T) {
			before := addrsOf(t, nsName, dev)
			if len(ipv6Of(before)) == 0 {
				t.Fatalf("%s starts without IPv6 addresses (%v); the test needs some", dev, before)
			}
			s, err := openDev(t, nsName, dev)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Set(netconf.MTU(1200)); err != nil {
				t.Fatal(err)
			}
			if during := addrsOf(t, nsName, dev); len(ipv6Of(during)) != 0 {
				t.Fatalf("with MTU 1200 %s still has %v: the kernel no longer removes them, the test proves nothing", dev, ipv6Of(during))
			}
			if err := s.Restore(); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if after := addrsOf(t, nsName, dev); !slices.Equal(after, before) {
				t.Errorf("%s after restore has %v, before the session %v", dev, after, before)
			}
		})
	}
}

// TestRestoreSaysWhichAddressIsMissing: an address that cannot be put
// back is named in the restore's error; the restore does not claim
// success.
func TestRestoreSaysWhichAddressIsMissing(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	host := l.Host(lab.A)
	s, err := openDev(t, host.Netns, host.Dev)
	if err != nil {
		t.Fatal(err)
	}
	// IPv6 off on the device: its addresses go and cannot come back,
	// whatever the restore does. The MTU change makes the session check
	// the addresses when it restores.
	disableIPv6(t, host.Netns, host.Dev)
	if err := s.Set(netconf.MTU(1400)); err != nil {
		t.Fatal(err)
	}
	err = s.Restore()
	if err == nil || !strings.Contains(err.Error(), host.IPv6.String()) {
		t.Fatalf("restore: %v; want an error naming %s", err, host.IPv6)
	}
}

// TestAltnameIsTheSameDevice: a device is one device under all its
// names: a session holding it by its name keeps a session asking by an
// alternative name out (and the other way round), and a session opened
// by the alternative name restores the device.
func TestAltnameIsTheSameDevice(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	host := l.Host(lab.A)
	const alt = "wirespeed-test-alternative-name"
	h := handleIn(t, host.Netns)
	link, err := h.LinkByName(host.Dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LinkAddAltName(link, alt); err != nil {
		t.Skipf("the kernel takes no alternative name: %v", err)
	}
	for _, names := range [][2]string{{host.Dev, alt}, {alt, host.Dev}} {
		first, second := names[0], names[1]
		s1, err := openDev(t, host.Netns, first)
		if err != nil {
			t.Fatal(err)
		}
		if err := s1.Set(netconf.MTU(1400)); err != nil {
			t.Fatal(err)
		}
		s2, err := openDev(t, host.Netns, second)
		if !errors.Is(err, netconf.ErrHeld) || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), second) {
			if s2 != nil {
				s2.Restore()
			}
			t.Fatalf("open %s while a session holds %s: %v; want %v naming both", second, first, err, netconf.ErrHeld)
		}
		if err := s1.Restore(); err != nil {
			t.Fatal(err)
		}
		if mtu := readState(t, l, lab.A).mtu; mtu != 1500 {
			t.Errorf("after a session opened as %s: MTU %d, want 1500", first, mtu)
		}
	}
	// Once the holder has ended, the device is free again.
	s, err := openDev(t, host.Netns, alt)
	if err != nil {
		t.Fatalf("open %s after the other sessions ended: %v", alt, err)
	}
	s.Restore()
}

// disableIPv6 turns IPv6 off on dev, from a thread inside nsName (its
// /proc/sys/net is the namespace's).
func disableIPv6(t *testing.T, nsName, dev string) {
	t.Helper()
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies in the namespace
		if err := netns.Set(ns); err != nil {
			done <- err
			return
		}
		done <- os.WriteFile("/proc/sys/net/ipv6/conf/"+dev+"/disable_ipv6", []byte("1"), 0)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
