package lab_test

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

// TestRoutedLab: a routed lab forwards a's datagrams to b through the
// router, shaped on the router's egress with the queue asked for, and
// Down removes all three namespaces.
func TestRoutedLab(t *testing.T) {
	nstest.RequireRoot(t)
	r := nstest.NewRouted(t, lab.RoutedConfig{RateBitsPerSecond: 10_000_000, LimitBytes: 3000})
	if r.Limit != 3000 {
		t.Errorf("tbf limit %d, want 3000", r.Limit)
	}
	a, b := r.Host(lab.A), r.Host(lab.B)
	if a.IPv4.Next() != r.RouterA.IPv4 || b.IPv4.Next() != r.Router.IPv4 || !lab.RoutedIPv4A.Contains(a.IPv4) || !lab.RoutedIPv4B.Contains(b.IPv4) {
		t.Errorf("addresses a %s, router %s/%s, b %s", a.IPv4, r.RouterA.IPv4, r.Router.IPv4, b.IPv4)
	}
	var ln *net.UDPConn
	if err := r.Do(lab.B, func() (err error) {
		ln, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(b.IPv4, 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var c *net.UDPConn
	if err := r.Do(lab.A, func() (err error) {
		c, err = net.DialUDP("udp4", nil, ln.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	ln.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	n, from, err := ln.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("a -> router -> b: %q %v", buf[:n], err)
	}
	if got := from.AddrPort().Addr().Unmap(); got != a.IPv4 {
		t.Errorf("datagram from %s, want a's %s (routed, not masqueraded)", got, a.IPv4)
	}
	// What lab run hands a client in b: the router's egress toward a
	// (b's traffic) first, then the one toward b.
	rns := lab.Namespace(r.Name, lab.Router)
	want := []lab.RouterEgress{{Netns: rns, Dev: "wst-ra", Toward: lab.A}, {Netns: rns, Dev: lab.RouterDeviceB, Toward: lab.B}}
	if eg, err := lab.RouterEgresses(r.Name, lab.B); err != nil || !slices.Equal(eg, want) {
		t.Errorf("RouterEgresses(%s, b) = %v, %v; want %v", r.Name, eg, err, want)
	}
	sent, _, err := r.RouterQdisc()
	if err != nil || sent == 0 {
		t.Errorf("router tbf sent %d: %v", sent, err)
	}
	if err := r.Down(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []lab.HostName{lab.A, lab.Router, lab.B} {
		if _, err := os.Stat("/run/netns/" + lab.Namespace(r.Name, s)); err == nil {
			t.Errorf("%s still there after Down", lab.Namespace(r.Name, s))
		}
	}
}
