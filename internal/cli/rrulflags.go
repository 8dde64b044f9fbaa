package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"wirespeed/internal/endpoint"
	"wirespeed/internal/spec"
)

// rrulFlags are the flags of the RRUL test (latency under load).
type rrulFlags struct {
	load        string
	idle        time.Duration
	udpInterval time.Duration
	tcpInterval time.Duration
}

var rrulFlagNames = []string{"load", "idle", "probe-interval", "tcp-probe-interval"}

func addRRULFlags(fl *pflag.FlagSet, f *rrulFlags) {
	d := spec.DefaultRRUL()
	f.load, f.idle, f.udpInterval, f.tcpInterval = d.Load, d.Idle, d.UDPProbeInterval, d.TCPProbeInterval
	fl.StringVar(&f.load, "load", d.Load, "RRUL: the load's direction: both, up (client to server) or down (server to client)")
	fl.Var(durationValue{&f.idle}, "idle", "RRUL: the idle phase before the load, with the probes alone")
	fl.Var(durationValue{&f.udpInterval}, "probe-interval", "RRUL: time between isochronous UDP probes (irtt's -i), 1ms or more")
	fl.Var(durationValue{&f.tcpInterval}, "tcp-probe-interval", "RRUL: time between TCP probes, each a new connection with one request and response")
}

// apply puts the RRUL settings in t: for RRUL, with 4 flows per direction
// unless -P says otherwise; for any other test, an RRUL flag is a mistake.
func (f *rrulFlags) apply(t *spec.Test, changed func(string) bool) error {
	set := func(name string) bool { return changed != nil && changed(name) }
	if t.Kind != spec.RRUL {
		for _, n := range rrulFlagNames {
			if set(n) {
				return usagef("--%s applies to the RRUL test (-t RRUL), not to %s", n, t.Kind)
			}
		}
		return nil
	}
	if !set("parallel") {
		t.Parallel = spec.DefaultRRULParallel
	}
	t.RRUL = spec.RRULSpec{Load: f.load, Idle: f.idle, UDPProbeInterval: f.udpInterval, TCPProbeInterval: f.tcpInterval}
	return nil
}

// routerQueueFlag is run's --router-queue NETNS/DEV, repeated: a
// router's egress on the path whose qdisc an RRUL run samples beside
// its own (endpoint.Config.RouterQueues). lab run passes a routed lab's
// (lab.RouterEgresses); it is hidden, the lab's plumbing rather than a
// setting for people.
func addRouterQueueFlag(fl *pflag.FlagSet, qs *[]endpoint.RouterQueue) {
	fl.Var(routerQueuesValue{qs}, "router-queue", "RRUL: also sample the root qdisc of this router egress, NETNS/DEV (lab run passes a routed lab's)")
	if err := fl.MarkHidden("router-queue"); err != nil {
		panic(err)
	}
}

// routerQueuesValue appends each NETNS/DEV it is given.
type routerQueuesValue struct{ qs *[]endpoint.RouterQueue }

func (v routerQueuesValue) String() string {
	if v.qs == nil {
		return ""
	}
	var out []string
	for _, q := range *v.qs {
		out = append(out, q.Netns+"/"+q.Dev)
	}
	return strings.Join(out, ",")
}

func (v routerQueuesValue) Set(s string) error {
	ns, dev, ok := strings.Cut(s, "/")
	if !ok || ns == "" || dev == "" || strings.Contains(dev, "/") {
		return fmt.Errorf("%q: want NETNS/DEV, a namespace under /run/netns and a device in it, as wst-lab-r/wst-rb", s)
	}
	*v.qs = append(*v.qs, endpoint.RouterQueue{Netns: ns, Dev: dev})
	return nil
}

func (v routerQueuesValue) Type() string { return "NETNS/DEV" }
