package lab_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/nstest"
)

// echo listens on side a at addr:0, dials it from side b, and checks that
// bytes go there and back.
func echo(t *testing.T, l *lab.Lab, addr netip.Addr) {
	t.Helper()
	var ln net.Listener
	err := l.Do(lab.A, func() error {
		var err error
		ln, err = net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
		return err
	})
	if err != nil {
		t.Fatalf("listen in a: %v", err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.Copy(c, io.LimitReader(c, 5))
		done <- err
	}()
	var c net.Conn
	err = l.Do(lab.B, func() error {
		var err error
		c, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("dial %s from b: %v", ln.Addr(), err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo over %s: %q, %v", addr, buf, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server side: %v", err)
	}
}

func TestUpDefault(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	if l.A.IPv4.String() != "10.77.0.1" || l.B.IPv4.String() != "10.77.0.2" ||
		l.A.IPv6.String() != "fd00:77::1" || l.B.IPv6.String() != "fd00:77::2" {
		t.Errorf("addresses a %s %s b %s %s", l.A.IPv4, l.A.IPv6, l.B.IPv4, l.B.IPv6)
	}
	if l.MTU != 1500 || l.RateBitsPerSecond != 0 {
		t.Errorf("mtu %d rate %d, want 1500 and none", l.MTU, l.RateBitsPerSecond)
	}
	t.Run("ipv4", func(t *testing.T) { echo(t, l, l.A.IPv4) })
	t.Run("ipv6", func(t *testing.T) { echo(t, l, l.A.IPv6) })

	// The host does not see the veth pair.
	if _, err := net.InterfaceByName(l.A.Dev); err == nil {
		t.Errorf("%s is visible on the host", l.A.Dev)
	}

	loaded, err := lab.Load(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if *loaded != *l {
		t.Errorf("Load = %+v, want %+v", loaded, l)
	}
	// A two-host lab has no router for lab run to hand its client.
	if eg, err := lab.RouterEgresses(l.Name, lab.B); err != nil || len(eg) != 0 {
		t.Errorf("RouterEgresses of a two-host lab = %v, %v; want none", eg, err)
	}
	names, err := lab.List()
	if err != nil {
		t.Fatal(err)
	}
	if !contains(names, l.Name) {
		t.Errorf("List = %v, lacks %s", names, l.Name)
	}

	// A second lab of the same name is refused, and the first survives.
	_, err = lab.Up(context.Background(), lab.Config{Name: l.Name})
	if !errors.Is(err, lab.ErrExists) {
		t.Errorf("second Up: %v, want ErrExists", err)
	}
	if _, err := lab.Load(l.Name); err != nil {
		t.Errorf("the first lab is damaged by the refused second: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUpConfigured(t *testing.T) {
	const rate = 100e6
	l := nstest.NewLab(t, lab.Config{
		MTU:               9000,
		RateBitsPerSecond: rate,
		Features:          map[string]bool{"tso": false, "gro": true},
		IPv4:              netip.MustParsePrefix("10.77.5.0/24"),
		IPv6:              netip.MustParsePrefix("fd00:77:5::/64"),
	})
	if l.A.IPv4.String() != "10.77.5.1" || l.B.IPv6.String() != "fd00:77:5::2" || l.MTU != 9000 {
		t.Errorf("lab %+v", l)
	}
	echo(t, l, l.A.IPv4)
	for _, s := range []lab.HostName{lab.A, lab.B} {
		host := l.Host(s)
		ns, err := netns.GetFromName(host.Netns)
		if err != nil {
			t.Fatal(err)
		}
		defer ns.Close()

		// Features, read through our own ethtool reader.
		nd, err := netdev.Open(ns)
		if err != nil {
			t.Fatal(err)
		}
		defer nd.Close()
		fs, err := nd.Features(host.Dev)
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := fs.Get("tx-tcp-segmentation"); f.Active {
			t.Errorf("%s: tx-tcp-segmentation on, want off", host.Netns)
		}
		if f, _ := fs.Get("rx-gro"); !f.Active {
			t.Errorf("%s: rx-gro off, want on", host.Netns)
		}

		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		link, err := h.LinkByName(host.Dev)
		if err != nil {
			t.Fatal(err)
		}
		if link.Attrs().MTU != 9000 {
			t.Errorf("%s mtu %d", host.Netns, link.Attrs().MTU)
		}
		qs, err := h.QdiscList(link)
		if err != nil {
			t.Fatal(err)
		}
		var tbf *netlink.Tbf
		for _, q := range qs {
			if q, ok := q.(*netlink.Tbf); ok {
				tbf = q
			}
		}
		wantRate, wantBurst, wantLimit := lab.TBF(rate, 9000)
		if tbf == nil {
			t.Fatalf("%s: no tbf qdisc in %v", host.Netns, qs)
		}
		if tbf.Rate != wantRate || tbf.Limit != wantLimit {
			t.Errorf("%s: tbf rate %d limit %d, want %d %d", host.Netns, tbf.Rate, tbf.Limit, wantRate, wantLimit)
		}
		// The bucket goes through the kernel as a time; allow rounding.
		if got := netlink.Xmitsize(tbf.Rate, tbf.Buffer); got < wantBurst*99/100 || got > wantBurst*101/100 {
			t.Errorf("%s: tbf burst %d bytes, want about %d", host.Netns, got, wantBurst)
		}
	}
	loaded, err := lab.Load(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.RateBitsPerSecond != rate || loaded.MTU != 9000 {
		t.Errorf("Load: rate %d mtu %d", loaded.RateBitsPerSecond, loaded.MTU)
	}
}

func TestUpBadFeatureCleansUp(t *testing.T) {
	nstest.RequireRoot(t)
	name := "tbad-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	_, err := lab.Up(context.Background(), lab.Config{Name: name, Features: map[string]bool{"turbo": true}})
	if err == nil || !strings.Contains(err.Error(), "turbo") {
		t.Errorf("error = %v, want one naming the unknown feature", err)
	}
	for _, s := range []lab.HostName{lab.A, lab.B} {
		if _, err := os.Stat("/run/netns/" + lab.Namespace(name, s)); !os.IsNotExist(err) {
			t.Errorf("namespace %s left after a failed Up", lab.Namespace(name, s))
			lab.Remove(name)
		}
	}
}

func TestDownIdempotent(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	for i := 0; i < 2; i++ {
		if err := l.Down(); err != nil {
			t.Fatalf("Down #%d: %v", i+1, err)
		}
	}
	if _, err := lab.Load(l.Name); !errors.Is(err, lab.ErrNotFound) {
		t.Errorf("Load after Down: %v, want ErrNotFound", err)
	}
	if err := l.Do(lab.A, func() error { return nil }); err == nil {
		t.Error("Do after Down gave no error")
	}
}

func TestDo(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	// Inside, the namespace has lo and the veth end and nothing else.
	var names []string
	err := l.Do(lab.B, func() error {
		ifs, err := net.Interfaces()
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "lo,wst-b" {
		t.Errorf("interfaces in b: %v, want lo and wst-b", names)
	}
	want := errors.New("from fn")
	if err := l.Do(lab.A, func() error { return want }); err != want {
		t.Errorf("Do returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "inside" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		l.Do(lab.A, func() error { panic("inside") })
	}()
}

// TestCountersPerNamespace checks what measure.ReadNetCounters documents:
// inside a namespace, /proc/thread-self shows its counters and /proc/self
// (the main thread's) does not.
func TestCountersPerNamespace(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	read := func(root string) measure.NetCounters {
		var c measure.NetCounters
		if err := l.Do(lab.B, func() (err error) { c, err = measure.ReadNetCounters(root); return err }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	before := read("/proc/thread-self")
	for i := 0; i < 3; i++ {
		echo(t, l, l.A.IPv4)
	}
	d := read("/proc/thread-self").Delta(before)
	if d.TCP.OutSegs < 9 || d.TCP.InSegs < 9 {
		t.Errorf("b sent %d and got %d TCP segments over three connections; want at least 9 each", d.TCP.OutSegs, d.TCP.InSegs)
	}
	// A new namespace starts from zero: b's counters are tiny, while
	// the host's have been counting since boot.
	inB := read("/proc/thread-self")["Tcp.ActiveOpens"]
	if inB != 3 {
		t.Errorf("Tcp.ActiveOpens in b = %d, want 3", inB)
	}
	// /proc/self is the main thread's, which is not in b.
	var self, thread string
	l.Do(lab.B, func() (err error) {
		self, _ = os.Readlink("/proc/self/ns/net")
		thread, _ = os.Readlink("/proc/thread-self/ns/net")
		return nil
	})
	if self == "" || self == thread {
		t.Errorf("inside b, /proc/self is in %q and /proc/thread-self in %q; want different namespaces", self, thread)
	}
}

func TestStart(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat program")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cat, "/proc/self/net/dev")
	var out strings.Builder
	cmd.Stdout = &out
	if err := l.Start(lab.A, cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wst-a:") || strings.Contains(out.String(), "eth0") {
		t.Errorf("the child does not see namespace a:\n%s", out.String())
	}
}
