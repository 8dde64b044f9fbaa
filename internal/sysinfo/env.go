package sysinfo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
)

// Env is the environment of one host, recorded so that a result is never
// separated from the kernel, interface settings and sysctls it was
// measured with. Package sysinfo fills it; fields it could not read are
// left at their zero value and the reason is given as a warning.
type Env struct {
	Hostname      string  `json:"hostname"`
	KernelRelease string  `json:"kernel_release"`
	CPU           CPUInfo `json:"cpu"`
	// CPUFreq is the CPUs' frequency scaling; absent when sysfs could
	// not be read (and in records written before it was kept).
	CPUFreq *CPUFreq `json:"cpufreq,omitempty"`
	// Peer is the address whose route chose Interface; empty when the
	// interface was named rather than looked up.
	Peer      string     `json:"peer,omitempty"`
	Interface *Interface `json:"interface,omitempty"`
	// CongestionControl is the TCP congestion control a socket gets unless
	// it asks for another, and the ones the kernel has loaded.
	CongestionControl CongestionControl `json:"congestion_control"`
	// Sysctls holds the settings that change results, by their sysctl
	// name ("net.ipv4.tcp_rmem"), each as the numbers the kernel shows:
	// three for tcp_rmem and tcp_wmem (min, default, max bytes), one for
	// the others. A sysctl that could not be read is absent.
	Sysctls map[string][]int64 `json:"sysctls,omitempty"`
	// MPTCP is the kernel's Multipath TCP settings (mptcp.go); absent on
	// a kernel without MPTCP.
	MPTCP *MPTCP `json:"mptcp,omitempty"`
	// Warnings say what could not be read, when the record is embedded
	// in a result (`wirespeed env` prints them on stderr instead).
	Warnings []string `json:"warnings,omitempty"`
	// DataPath is what the kernel offers the data path options.
	DataPath *DataPathSupport `json:"datapath,omitempty"`
	// CPUBaseline is the host's CPU utilization over a short idle window
	// before the session's first run (TakeBaseline); absent when it was
	// not taken or could not be read (then Warnings says why).
	CPUBaseline *measure.CPUBaseline `json:"cpu_baseline,omitempty"`
}

// CPUInfo is the processor as /proc/cpuinfo describes it.
type CPUInfo struct {
	Model string `json:"model"`
	Count int    `json:"count"` // logical CPUs online when read
}

// Interface is the network interface that carries a test, with the
// settings that change what it can do.
type Interface struct {
	Name          string `json:"name"`
	Index         int    `json:"index"`
	Driver        string `json:"driver,omitempty"`
	DriverVersion string `json:"driver_version,omitempty"`
	Firmware      string `json:"firmware_version,omitempty"`
	BusInfo       string `json:"bus_info,omitempty"`
	MTU           int    `json:"mtu"`
	// SpeedMbps is the negotiated link speed in 10^6 bits/s; 0 where the
	// driver does not know one (virtual devices, a link that is down).
	SpeedMbps int `json:"speed_mbps,omitempty"`
	// Duplex is "full" or "half"; empty where unknown.
	Duplex string `json:"duplex,omitempty"`
	// Offloads are ethtool's classic groups (tx-checksumming,
	// scatter-gather, tcp-segmentation-offload, ...) summarised from
	// Features the way the ethtool program shows them.
	Offloads []netdev.FeatureState `json:"offloads,omitempty"`
	// Features is every feature the kernel reports for the device, by its
	// kernel name (tx-tcp-segmentation, rx-gro, ...), in kernel order.
	Features []netdev.FeatureState `json:"features,omitempty"`
	Qdisc    *Qdisc                `json:"qdisc,omitempty"`
}

// Qdisc is the root queueing discipline of an interface's transmit side.
type Qdisc struct {
	Kind   string `json:"kind"`   // "noqueue", "pfifo_fast", "fq_codel", "mq", "tbf", ...
	Handle string `json:"handle"` // "1:0"
	// For a token bucket filter: its rate, bucket size and queue limit.
	RateBitsPerSecond uint64 `json:"rate_bps,omitempty"`
	BurstBytes        uint32 `json:"burst_bytes,omitempty"`
	LimitBytes        uint32 `json:"limit_bytes,omitempty"`
}

// CongestionControl is the TCP congestion control setting of a host.
type CongestionControl struct {
	Default   string   `json:"default"`
	Available []string `json:"available,omitempty"`
}

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
	// Name is what the item is: "kernel", "governor", "mtu", "tso", "qdisc",
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
	if e.CPUFreq != nil {
		add("governor", e.CPUFreq.Governor())
	}
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

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// Feature returns the feature or offload group of that name.
func (i *Interface) Feature(name string) (netdev.FeatureState, bool) {
	if i == nil {
		return netdev.FeatureState{}, false
	}
	for _, list := range [][]netdev.FeatureState{i.Offloads, i.Features} {
		for _, f := range list {
			if f.Name == name {
				return f, true
			}
		}
	}
	return netdev.FeatureState{}, false
}
