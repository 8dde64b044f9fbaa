package sysinfo_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/sysinfo"
)

// TestCollectVeth describes side a of a lab with the route to side b:
// a veth with the lab's MTU, features and rate limit.
func TestCollectVeth(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{MTU: 9000, RateBitsPerSecond: 50e6, Features: map[string]bool{"tso": false}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, peer := range []netip.Addr{l.B.IPv4, l.B.IPv6} {
		var (
			env      sysinfo.Env
			warnings []string
		)
		err := l.Do(lab.A, func() (err error) {
			env, warnings, err = sysinfo.Collect(ctx, sysinfo.Options{Peer: peer})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range warnings {
			// busy_poll and busy_read are global: only the host's
			// namespace shows them.
			if !strings.Contains(w, "net.core.busy_") {
				t.Errorf("warning: %s", w)
			}
		}
		ifc := env.Interface
		if ifc == nil {
			t.Fatal("no interface")
		}
		if ifc.Name != "wst-a" || ifc.Driver != "veth" || ifc.MTU != 9000 {
			t.Errorf("interface %s driver %q mtu %d, want wst-a veth 9000", ifc.Name, ifc.Driver, ifc.MTU)
		}
		if ifc.SpeedMbps != 10000 || ifc.Duplex != "full" {
			t.Errorf("link %d Mb/s %q duplex, want veth's 10000 full", ifc.SpeedMbps, ifc.Duplex)
		}
		if f, ok := ifc.Feature("tcp-segmentation-offload"); !ok || f.On || f.Fixed {
			t.Errorf("tso = %+v (found %v), want off and changeable", f, ok)
		}
		if f, ok := ifc.Feature("tx-tcp-segmentation"); !ok || f.On {
			t.Errorf("tx-tcp-segmentation = %+v, want off", f)
		}
		if f, ok := ifc.Feature("generic-segmentation-offload"); !ok || !f.On {
			t.Errorf("gso = %+v, want on", f)
		}
		if f, ok := ifc.Feature("large-receive-offload"); !ok || !f.Fixed {
			t.Errorf("lro = %+v, want fixed (veth has none)", f)
		}
		if q := ifc.Qdisc; q == nil || q.Kind != "tbf" || q.RateBitsPerSecond != 50e6 || q.BurstBytes == 0 || q.LimitBytes == 0 {
			t.Errorf("qdisc = %+v, want tbf at 50e6 bits/s", q)
		}
		// The namespace's own sysctls: a new namespace starts from the
		// kernel's defaults, whatever the host set.
		if env.CongestionControl.Default == "" || len(env.Sysctls["net.ipv4.tcp_rmem"]) != 3 {
			t.Errorf("cc %q tcp_rmem %v", env.CongestionControl.Default, env.Sysctls["net.ipv4.tcp_rmem"])
		}
	}

	// From the host, the lab's devices do not exist.
	_, _, err := sysinfo.Collect(ctx, sysinfo.Options{Dev: "wst-a"})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("wst-a seen from the host: %v", err)
	}
}
