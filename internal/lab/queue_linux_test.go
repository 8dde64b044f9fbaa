package lab_test

import (
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

// rootTBF reads the root tbf of dev in the namespace nsName from the
// kernel; nil when the device has none.
func rootTBF(t *testing.T, nsName, dev string) *netlink.Tbf {
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
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		t.Fatalf("%s in %s: %v", dev, nsName, err)
	}
	qs, err := h.QdiscList(link)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if tbf, ok := q.(*netlink.Tbf); ok && q.Attrs().Parent == netlink.HANDLE_ROOT {
			return tbf
		}
	}
	return nil
}

// TestUpQueue: a lab's tbf holds the queue asked for, as the kernel
// reports it: 20 Mbit/s (2,500,000 B/s) with a 100 ms latency and a
// 16 KiB bucket is tc's limit of 250,000 + 16,384 = 266,384 bytes on
// both ends; Load reads it back.
func TestUpQueue(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: 20e6,
		Queue: lab.Queue{Latency: 100 * time.Millisecond, BurstBytes: 16 << 10}})
	for _, s := range []lab.HostName{lab.A, lab.B} {
		h := l.Host(s)
		tbf := rootTBF(t, h.Netns, h.Dev)
		if tbf == nil {
			t.Fatalf("side %s: no tbf", s)
		}
		if tbf.Rate != 2_500_000 || tbf.Limit != 266_384 {
			t.Errorf("side %s: tbf rate %d B/s limit %d bytes, want 2500000 and 266384", s, tbf.Rate, tbf.Limit)
		}
		// The bucket goes through the kernel as a time; allow rounding.
		if got := netlink.Xmitsize(tbf.Rate, tbf.Buffer); got < 16384*99/100 || got > 16384*101/100 {
			t.Errorf("side %s: tbf burst %d bytes, want about 16384", s, got)
		}
	}
	loaded, err := lab.Load(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if *loaded != *l || loaded.A.QueueBytes != 266_384 || loaded.B.RateBitsPerSecond != 20e6 {
		t.Errorf("Load = %+v, want %+v with 266384-byte queues at 20 Mbit/s", loaded, l)
	}
}

// TestUpOneWay: one-way shaping puts the tbf on the egress of the side
// named, and none on the other's (the kernel's default qdisc, noqueue on
// a veth, stays); a queue in bytes is the limit as given.
func TestUpOneWay(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: 50e6, OneWay: lab.B, Queue: lab.Queue{LimitBytes: 64 << 10}})
	if tbf := rootTBF(t, l.A.Netns, l.A.Dev); tbf != nil {
		t.Errorf("side a has a tbf (%+v); only b's egress is shaped", tbf)
	}
	tbf := rootTBF(t, l.B.Netns, l.B.Dev)
	if tbf == nil || tbf.Rate*8 != 50e6 || tbf.Limit != 65536 {
		t.Fatalf("side b's tbf %+v, want 50 Mbit/s with a 65536-byte queue", tbf)
	}
	loaded, err := lab.Load(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.A.RateBitsPerSecond != 0 || loaded.B.RateBitsPerSecond != 50e6 || loaded.RateBitsPerSecond != 50e6 {
		t.Errorf("Load: a %d b %d lab %d bits/s; want 0, 50e6, 50e6", loaded.A.RateBitsPerSecond, loaded.B.RateBitsPerSecond, loaded.RateBitsPerSecond)
	}
}

// TestMeshQueue: a mesh lab's queue applies to both ends of a limited
// host's link: 10 Mbit/s is 1,250,000 B/s, 50 ms of it 62,500 bytes,
// and TBF's bucket 1,250,000/250 = 5,000 more.
func TestMeshQueue(t *testing.T) {
	m := nstest.NewMesh(t, lab.MeshConfig{Hosts: 2, RateBitsPerSecond: map[string]uint64{"h2": 10e6},
		Queue: lab.Queue{Latency: 50 * time.Millisecond}})
	for _, c := range []struct{ ns, dev string }{{m.Hosts[1].Netns, "wst-h2"}, {m.Switch, "wst-p2"}} {
		if tbf := rootTBF(t, c.ns, c.dev); tbf == nil || tbf.Limit != 67_500 {
			t.Errorf("%s in %s: tbf %+v, want a limit of 67500 bytes", c.dev, c.ns, tbf)
		}
	}
	if tbf := rootTBF(t, m.Hosts[0].Netns, "wst-h1"); tbf != nil {
		t.Errorf("h1's link has a tbf: %+v", tbf)
	}
}
