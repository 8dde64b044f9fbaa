package lab_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

// meshEcho listens in host i on its address and echoes five bytes to a
// connection from host j.
func meshEcho(t *testing.T, m *lab.Mesh, i, j int, addr netip.Addr) {
	t.Helper()
	var ln net.Listener
	if err := m.Do(i, func() error {
		var err error
		ln, err = net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
		return err
	}); err != nil {
		t.Fatalf("listen in %s: %v", m.Hosts[i].Name, err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.Copy(c, io.LimitReader(c, 5))
	}()
	var c net.Conn
	if err := m.Do(j, func() error {
		var err error
		c, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial %s from %s: %v", ln.Addr(), m.Hosts[j].Name, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 5)
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo %s -> %s over %s: %q %v", m.Hosts[j].Name, m.Hosts[i].Name, addr, buf, err)
	}
}

// TestMeshLab: three hosts on one bridge reach each other over IPv4 and
// IPv6, the rate limit sits on both ends of the limited host's link only,
// and removing the mesh removes every namespace.
func TestMeshLab(t *testing.T) {
	m := nstest.NewMesh(t, lab.MeshConfig{RateBitsPerSecond: map[string]uint64{"h3": 20e6}})
	if len(m.Hosts) != 3 || m.Hosts[0].IPv4.String() != "10.77.1.1" || m.Hosts[2].IPv6.String() != "fd00:77:1::3" || m.Hosts[1].Netns != "wst-"+m.Name+"-h2" {
		t.Fatalf("hosts %+v", m.Hosts)
	}
	for i := range m.Hosts {
		for j := range m.Hosts {
			if i != j {
				meshEcho(t, m, i, j, m.Hosts[i].IPv4)
			}
		}
	}
	meshEcho(t, m, 0, 2, m.Hosts[0].IPv6)

	tbf := func(ns, dev string) bool {
		h, err := netns.GetFromName(ns)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		nl, err := netlink.NewHandleAt(h)
		if err != nil {
			t.Fatal(err)
		}
		defer nl.Close()
		l, err := nl.LinkByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := nl.QdiscList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q, ok := q.(*netlink.Tbf); ok && q.Rate*8 == 20e6 {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		ns, dev string
		want    bool
	}{
		{m.Hosts[2].Netns, "wst-h3", true}, {m.Switch, "wst-p3", true},
		{m.Hosts[0].Netns, "wst-h1", false}, {m.Switch, "wst-p1", false},
	} {
		if got := tbf(c.ns, c.dev); got != c.want {
			t.Errorf("tbf on %s in %s: %v, want %v", c.dev, c.ns, got, c.want)
		}
	}

	if _, err := lab.UpMesh(context.Background(), lab.MeshConfig{Name: m.Name}); !errors.Is(err, lab.ErrExists) {
		t.Errorf("second mesh of the same name: %v", err)
	}
	names, err := lab.ListMeshes()
	if err != nil || !hasName(names, m.Name) {
		t.Errorf("ListMeshes = %v, %v; want %s in it", names, err, m.Name)
	}
	if err := lab.RemoveMesh(m.Name); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{m.Switch, m.Hosts[0].Netns, m.Hosts[2].Netns} {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("%s is still there", ns)
		}
	}
	if err := lab.RemoveMesh(m.Name); err != nil {
		t.Errorf("second remove: %v", err)
	}
}

// TestMeshLabFailedUpCleansUp: a mesh whose making stops half way (here
// its context is cancelled after the first namespaces) leaves nothing
// behind.
func TestMeshLabFailedUpCleansUp(t *testing.T) {
	nstest.RequireRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	name := "tcancel-mesh"
	lab.RemoveMesh(name)
	if _, err := lab.UpMesh(ctx, lab.MeshConfig{Name: name}); !errors.Is(err, context.Canceled) {
		t.Fatalf("up with a cancelled context: %v", err)
	}
	names, _ := lab.ListMeshes()
	if hasName(names, name) {
		t.Errorf("a failed up left mesh %s behind", name)
		lab.RemoveMesh(name)
	}
}

func hasName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
