package cli

import (
	"time"

	"github.com/spf13/pflag"

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
