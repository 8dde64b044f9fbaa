package sysinfo

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestCollectLoopback describes the real host with the loopback address as
// peer: the route leads to lo.
func TestCollectLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no loopback interface here: %v", err)
	}
	for _, peer := range []string{"127.0.0.1", "127.0.0.42", "::1"} {
		t.Run(peer, func(t *testing.T) {
			env, warnings, err := Collect(ctx, Options{Peer: netip.MustParseAddr(peer)})
			if err != nil {
				if peer == "::1" && strings.Contains(err.Error(), "unreachable") {
					t.Skipf("no IPv6 here: %v", err)
				}
				t.Fatal(err)
			}
			for _, w := range warnings {
				if strings.Contains(w, " lo") {
					t.Errorf("warning about lo: %s", w)
				}
			}
			ifc := env.Interface
			if ifc == nil {
				t.Fatal("no interface in the record")
			}
			if ifc.Name != "lo" || ifc.Index != lo.Index || ifc.MTU != lo.MTU || ifc.Driver != "loopback" {
				t.Errorf("interface = %s index %d mtu %d driver %q; want lo index %d mtu %d driver loopback",
					ifc.Name, ifc.Index, ifc.MTU, ifc.Driver, lo.Index, lo.MTU)
			}
			if env.Peer != peer {
				t.Errorf("peer = %q, want %q", env.Peer, peer)
			}
			if f, ok := ifc.Feature("rx-checksumming"); !ok || !f.On || !f.Fixed {
				t.Errorf("rx-checksumming = %+v (found %v), want on and fixed on lo", f, ok)
			}
			if f, ok := ifc.Feature("rx-gro"); !ok {
				t.Errorf("kernel feature rx-gro missing, got %+v", f)
			}
			if ifc.Qdisc == nil || ifc.Qdisc.Kind != "noqueue" {
				t.Errorf("qdisc = %+v, want noqueue on lo", ifc.Qdisc)
			}
			if env.KernelRelease == "" || env.CPU.Count < 1 || env.CongestionControl.Default == "" {
				t.Errorf("host part missing: kernel %q cpus %d cc %q", env.KernelRelease, env.CPU.Count, env.CongestionControl.Default)
			}
		})
	}
}

func TestCollectDevByName(t *testing.T) {
	env, _, err := Collect(context.Background(), Options{Dev: "lo"})
	if err != nil {
		t.Fatal(err)
	}
	if env.Interface == nil || env.Interface.Name != "lo" || env.Peer != "" {
		t.Errorf("interface %+v peer %q, want lo and no peer", env.Interface, env.Peer)
	}
}

func TestCollectNoSuchDev(t *testing.T) {
	_, _, err := Collect(context.Background(), Options{Dev: "wst-nosuch0"})
	if err == nil || !strings.Contains(err.Error(), `"wst-nosuch0" does not exist`) {
		t.Errorf("error = %v, want one saying the interface does not exist", err)
	}
}

// TestCollectDataPath: on the live host the data path options are tried
// on sockets; this kernel (4.14 or later, as CI's) has them all.
func TestCollectDataPath(t *testing.T) {
	env, _, err := Collect(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dp := env.DataPath
	if dp == nil || !dp.Probed {
		t.Fatalf("data path support %+v, want probed", dp)
	}
	if KernelAtLeast(env.KernelRelease, 5, 0) && !(dp.MsgZeroCopy && dp.UDPGSO && dp.UDPGRO && dp.TCPInternalPacing) {
		t.Errorf("kernel %s: support %+v, want every feature", env.KernelRelease, *dp)
	}
}
