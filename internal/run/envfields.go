package run

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// offloadShort are ethtool's short names of its offload groups (the
// same table as netdev.Groups), so that a difference reads "tso=off"
// rather than "tcp-segmentation-offload=off".
var offloadShort = map[string]string{
	"rx-checksumming":              "rx",
	"tx-checksumming":              "tx",
	"scatter-gather":               "sg",
	"tcp-segmentation-offload":     "tso",
	"udp-fragmentation-offload":    "ufo",
	"generic-segmentation-offload": "gso",
	"generic-receive-offload":      "gro",
	"large-receive-offload":        "lro",
	"rx-vlan-offload":              "rxvlan",
	"tx-vlan-offload":              "txvlan",
	"ntuple-filters":               "ntuple",
	"receive-hashing":              "rxhash",
}

// OffloadShort returns ethtool's short name of an offload group
// ("tso" for "tcp-segmentation-offload"), or the name itself.
func OffloadShort(name string) string {
	if s, ok := offloadShort[name]; ok {
		return s
	}
	return name
}

// EnvField is one comparable item of an environment record.
type EnvField struct {
	// Name is what the item is: "kernel", "mtu", "tso", "qdisc",
	// "net.ipv4.tcp_rmem", ...
	Name  string
	Value string
}

// Fields flattens the record into the items that change results, in a
// fixed order, each as plain text: what two records are compared by
// (`wirespeed compare`, plot labels). Numbers are written plainly (bytes,
// bits/s), not scaled for people. A record without an interface has no
// interface items.
func (e *Env) Fields() []EnvField {
	if e == nil {
		return nil
	}
	var out []EnvField
	add := func(name, value string) { out = append(out, EnvField{name, value}) }
	add("host", e.Hostname)
	add("kernel", e.KernelRelease)
	add("cpu", e.CPU.Model)
	add("cpus", strconv.Itoa(e.CPU.Count))
	add("cc", e.CongestionControl.Default)
	if ifc := e.Interface; ifc != nil {
		add("interface", ifc.Name)
		add("driver", ifc.Driver)
		add("mtu", strconv.Itoa(ifc.MTU))
		if ifc.SpeedMbps > 0 {
			add("speed_mbps", strconv.Itoa(ifc.SpeedMbps))
		}
		if q := ifc.Qdisc; q != nil {
			v := q.Kind
			if q.RateBitsPerSecond > 0 {
				v += fmt.Sprintf(" rate_bps=%d", q.RateBitsPerSecond)
			}
			add("qdisc", v)
		}
		for _, f := range ifc.Offloads {
			add(OffloadShort(f.Name), onOff(f.On))
		}
	}
	names := make([]string, 0, len(e.Sysctls))
	for n := range e.Sysctls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		vals := make([]string, len(e.Sysctls[n]))
		for i, v := range e.Sysctls[n] {
			vals[i] = strconv.FormatInt(v, 10)
		}
		add(n, strings.Join(vals, " "))
	}
	return out
}

// EnvDiff is one item in which two sides' records differ.
type EnvDiff struct {
	Side Side   // whose record: local or remote
	Name string // the item, as in EnvField
	A, B string // its value in each record; "" where a record lacks it
}

// DiffEnv lists the items in which b differs from a for one side, in the
// order of Fields. A nil record has no items: comparing with it lists
// nothing, since nothing is known.
func DiffEnv(side Side, a, b *Env) []EnvDiff {
	if a == nil || b == nil {
		return nil
	}
	fa, fb := a.Fields(), b.Fields()
	mb := make(map[string]string, len(fb))
	for _, f := range fb {
		mb[f.Name] = f.Value
	}
	var out []EnvDiff
	seen := map[string]bool{}
	for _, f := range fa {
		seen[f.Name] = true
		if v, ok := mb[f.Name]; !ok || v != f.Value {
			out = append(out, EnvDiff{Side: side, Name: f.Name, A: f.Value, B: mb[f.Name]})
		}
	}
	for _, f := range fb {
		if !seen[f.Name] {
			out = append(out, EnvDiff{Side: side, Name: f.Name, B: f.Value})
		}
	}
	return out
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
