package run

// Env is the environment of one host, recorded so that a result is never
// separated from the kernel, interface settings and sysctls it was
// measured with. Package sysinfo fills it; fields it could not read are
// left at their zero value and the reason is given as a warning.
type Env struct {
	Hostname      string  `json:"hostname"`
	KernelRelease string  `json:"kernel_release"`
	CPU           CPUInfo `json:"cpu"`
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
	// Warnings say what could not be read, when the record is embedded
	// in a result (`wirespeed env` prints them on stderr instead).
	Warnings []string `json:"warnings,omitempty"`
	// DataPath is what the kernel offers the data path options.
	DataPath *DataPathSupport `json:"datapath,omitempty"`
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
	Offloads []Feature `json:"offloads,omitempty"`
	// Features is every feature the kernel reports for the device, by its
	// kernel name (tx-tcp-segmentation, rx-gro, ...), in kernel order.
	Features []Feature `json:"features,omitempty"`
	Qdisc    *Qdisc    `json:"qdisc,omitempty"`
}

// Feature is the state of one offload feature.
type Feature struct {
	Name string `json:"name"`
	On   bool   `json:"on"`
	// Fixed is set when the driver does not let the feature change.
	Fixed bool `json:"fixed"`
	// Requested is what was last asked for. It differs from On when the
	// kernel keeps a feature off because one it depends on is off (TSO
	// without scatter-gather), as ethtool's "[requested on]".
	Requested bool `json:"requested"`
}

// Feature returns the feature or offload group of that name.
func (i *Interface) Feature(name string) (Feature, bool) {
	if i == nil {
		return Feature{}, false
	}
	for _, list := range [][]Feature{i.Offloads, i.Features} {
		for _, f := range list {
			if f.Name == name {
				return f, true
			}
		}
	}
	return Feature{}, false
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

// SettingChange is one host setting that wirespeed changed for a run, so a
// result says what it was measured with and what it changed on the way.
type SettingChange struct {
	Device    string `json:"device"`
	Namespace string `json:"namespace,omitempty"` // empty for the host's own
	// Setting is "mtu" or the feature as it was asked for ("tso",
	// "tx-checksumming", "rx-gro").
	Setting string `json:"setting"`
	// Before and After are "on" or "off" for a feature, the number of
	// bytes for the MTU.
	Before string `json:"before"`
	After  string `json:"after"`
	// Features lists every kernel feature whose state the change moved,
	// including the ones the kernel turned off or on as a consequence
	// (turning tx-checksumming off also turns off TSO).
	Features []FeatureChange `json:"features,omitempty"`
}

// FeatureChange is one kernel feature that a setting change moved.
type FeatureChange struct {
	Name   string `json:"name"`
	Before bool   `json:"before"`
	After  bool   `json:"after"`
	// Consequence is set for a feature the setting did not ask for: the
	// kernel moved it because it depends on one that was (TSO needs tx
	// checksumming).
	Consequence bool `json:"consequence,omitempty"`
}
