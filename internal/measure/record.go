package measure

// CPU is what one side's CPU did over a measurement window, as the results
// document carries it. measure fills it from /proc/stat deltas and the
// process's rusage.
//
// The percentages are system-wide: shares of all the time of all the CPUs
// the kernel counted over the window, so 100 means every CPU was busy the
// whole window. User, nice, system, irq, softirq, iowait, steal and idle
// add up to 100. Guest time is inside user (and guest_nice inside nice),
// as the kernel counts it, and is not added again.
type CPU struct {
	// UtilPct is the busy share: everything but idle and iowait. Steal
	// counts as busy (the CPU was wanted but the hypervisor ran something
	// else); StealPct shows how much of it that was.
	UtilPct    float64 `json:"util_pct"`
	UserPct    float64 `json:"user_pct"` // includes guest
	NicePct    float64 `json:"nice_pct"` // includes guest_nice
	SystemPct  float64 `json:"system_pct"`
	IRQPct     float64 `json:"irq_pct"`
	SoftIRQPct float64 `json:"softirq_pct"`
	// IOWaitPct is idle time during which I/O was outstanding: idle, not
	// busy, but shown apart.
	IOWaitPct float64 `json:"iowait_pct"`
	StealPct  float64 `json:"steal_pct"`
	IdlePct   float64 `json:"idle_pct"`

	// CPUs is how many CPUs the percentages are of.
	CPUs int `json:"cpus"`
	// BusiestCPUPct is the utilization of the busiest single CPU: one
	// saturated core shows here while UtilPct stays low on a large host.
	BusiestCPUPct float64 `json:"busiest_cpu_pct"`
	// BusiestCPU is the kernel's number of that CPU, -1 when there were
	// no per-CPU figures.
	BusiestCPU int `json:"busiest_cpu"`
	// PerCPUUtilPct is each CPU's utilization, in the kernel's order;
	// PerCPUIDs gives the kernel's number of the CPU at each position
	// (they differ from the position when CPUs are offline).
	PerCPUUtilPct []float64 `json:"per_cpu_util_pct"`
	PerCPUIDs     []int     `json:"per_cpu_ids"`
	// BusiestCPUShares is the busiest CPU's time split by state, in
	// percent of that CPU's time.
	BusiestCPUShares *CPUShares `json:"busiest_cpu_shares,omitempty"`

	// ProcessUserS and ProcessSystemS are the CPU seconds this side's own
	// process used over the window, in user and kernel mode, from rusage.
	ProcessUserS   float64 `json:"process_user_s"`
	ProcessSystemS float64 `json:"process_system_s"`
	// PID is this side's process id; Threads its busiest threads over the
	// window, from /proc/PID/task (at most MaxTasks).
	PID     int       `json:"pid,omitempty"`
	Threads []TaskCPU `json:"threads,omitempty"`
	// ThreadCPUShares is the split of each CPU one of Threads last ran
	// on, when that is not the busiest CPU.
	ThreadCPUShares []CPUShares `json:"thread_cpu_shares,omitempty"`
	// OtherProcessesUtilPct is the CPU time every other user-space
	// process on the host alive at both ends of the window (a scan of
	// /proc/PID at each) used over it, in percent of one CPU, and
	// OtherProcesses the busiest of them (at most MaxTasks). Kernel
	// threads are left out: ksoftirqd does the test's own packets.
	OtherProcessesUtilPct float64   `json:"other_processes_util_pct,omitempty"`
	OtherProcesses        []TaskCPU `json:"other_processes,omitempty"`
	// OtherProcessesHostUtilPct is the host's user, nice and system time
	// over the window beyond this process's own, in percent of one CPU,
	// from /proc/stat's ticks and rusage (HostOthersPct): every other
	// process's time, those that started and ended within the window
	// included, which the scan behind OtherProcessesUtilPct cannot see
	// (a build's compilers live for a fraction of a second). Interrupt
	// and softirq time is left out, as kernel threads are from the scan:
	// it is mostly the test's own packets. On a kernel without
	// CONFIG_IRQ_TIME_ACCOUNTING the softirq run in this process's
	// context is in its own time but not in the host's system time, and
	// the figure is short by that much. A peer on the same host is
	// inside it (OthersOnHost takes it out).
	OtherProcessesHostUtilPct float64 `json:"other_processes_host_util_pct,omitempty"`
	// Baseline is the side's idle CPU baseline, taken once per control
	// session before its first run (the side's env record keeps it too);
	// nil when there is none.
	Baseline *CPUBaseline `json:"baseline,omitempty"`
	// TasksError says why threads and other processes are missing.
	TasksError string `json:"tasks_error,omitempty"`

	// ElapsedS is the length of the window the figures cover, by the
	// monotonic clock: from the first of this side's windows opening to
	// the last one closing when it has two (TCP_BIDIR).
	ElapsedS float64 `json:"elapsed_s"`

	// ServiceDemandMicrosPerKB is netperf's service demand: microseconds
	// of CPU time, system-wide, per KB (1024 bytes) of payload moved over
	// the window. See ServiceDemand.
	ServiceDemandMicrosPerKB float64 `json:"service_demand_us_per_kb"`
	// ServiceDemandMicrosPerTransaction is netperf's service demand of a
	// request/response test: microseconds of CPU time per transaction.
	ServiceDemandMicrosPerTransaction float64 `json:"service_demand_us_per_tr,omitempty"`
}

// OthersOnHost is the CPU other processes took on this side's host over
// its window, in percent of one CPU: the host's figure
// (OtherProcessesHostUtilPct), or the processes named
// (OtherProcessesUtilPct) when theirs is larger or the host's is
// missing (a record from before it, or a side whose scan failed, where
// a peer on the host could not be told apart). peer is the other side's
// record, nil without one: when its process ran on this host apart from
// this one (its pid among the processes named), its time is the test's
// and is taken out of both. A peer on this host that is not among the
// MaxTasks named stays in the host's figure.
func (c *CPU) OthersOnHost(peer *CPU) float64 {
	named, host := c.OtherProcessesUtilPct, c.OtherProcessesHostUtilPct
	if c.TasksError != "" {
		host = 0
	}
	if peer != nil && peer.PID > 0 {
		for _, p := range c.OtherProcesses {
			if p.ID == peer.PID {
				named -= p.UtilPct
				host -= p.UtilPct
			}
		}
	}
	return max(named, host, 0)
}

// CPUShares is one CPU's time split by state, in percent of its time.
type CPUShares struct {
	CPU        int     `json:"cpu"` // the kernel's number of the CPU
	UtilPct    float64 `json:"util_pct"`
	UserPct    float64 `json:"user_pct"`
	NicePct    float64 `json:"nice_pct"`
	SystemPct  float64 `json:"system_pct"`
	IRQPct     float64 `json:"irq_pct"`
	SoftIRQPct float64 `json:"softirq_pct"`
	StealPct   float64 `json:"steal_pct"`
}

// TaskCPU is the CPU time a process or a thread used over a side's CPU
// window, from /proc/PID/stat.
type TaskCPU struct {
	ID      int     `json:"id"` // process or thread id
	Name    string  `json:"name"`
	UserS   float64 `json:"user_s"`
	SystemS float64 `json:"system_s"`
	// UtilPct is its time on a CPU in percent of one CPU over the
	// window, as top shows it: from schedstat's run time for a thread
	// (exact), from user plus system ticks for a process.
	UtilPct float64 `json:"util_pct"`
	// LastCPU is the CPU it last ran on when the window closed.
	LastCPU int `json:"last_cpu"`
	// WaitPct is the time a thread was runnable but waiting for a CPU,
	// in percent of the window (from /proc/PID/task/TID/schedstat;
	// threads only).
	WaitPct float64 `json:"wait_pct,omitempty"`
}

// MaxTasks bounds the threads and other processes a CPU record lists.
const MaxTasks = 8

// ServiceDemand is netperf's service demand: the CPU time spent, in
// microseconds, for each KB (1024 bytes) of payload moved:
//
//	SD = utilPct/100 * cpus * elapsedS * 1e6 / (bytes/1024)
//
// utilPct is the system-wide utilization over the window (0 to 100 of all
// cpus), elapsedS the length of the window in seconds and bytes the
// payload moved in it. It is 0 when no bytes were moved or an argument is
// not positive.
func ServiceDemand(utilPct float64, cpus int, elapsedS float64, bytes int64) float64 {
	if bytes <= 0 || cpus <= 0 || elapsedS <= 0 || utilPct <= 0 {
		return 0
	}
	cpuMicros := utilPct / 100 * float64(cpus) * elapsedS * 1e6
	return cpuMicros / (float64(bytes) / 1024)
}

// ServiceDemandPerTransaction is netperf's service demand of a
// request/response test, in microseconds of CPU time per transaction:
//
//	SD = utilPct/100 * cpus * elapsedS * 1e6 / transactions
//
// It is 0 when no transaction completed or an argument is not positive.
func ServiceDemandPerTransaction(utilPct float64, cpus int, elapsedS float64, transactions int64) float64 {
	if transactions <= 0 || cpus <= 0 || elapsedS <= 0 || utilPct <= 0 {
		return 0
	}
	return utilPct / 100 * float64(cpus) * elapsedS * 1e6 / float64(transactions)
}

// Counters is how much the kernel's protocol counters (/proc/net/snmp and
// /proc/net/netstat) changed over a window on one host. The named fields
// are the ones a result shows; All keeps every counter so a reader can
// look at any other.
//
// The counters are per network namespace and count every socket in it, not
// only the test's: on a busy host the deltas include other traffic.
type Counters struct {
	IP     IPCounters     `json:"ip"`
	TCP    TCPCounters    `json:"tcp"`
	UDP    UDPCounters    `json:"udp"`
	TCPExt TCPExtCounters `json:"tcp_ext"`
	// All is the change of every counter both readings had, keyed by the
	// kernel's "Prefix.Name": "Tcp.RetransSegs", "TcpExt.TCPTimeouts",
	// "IpExt.InOctets". Gauges such as Tcp.CurrEstab are included as they
	// are: their change, not their value.
	All map[string]int64 `json:"all,omitempty"`
}

// IPCounters are the changes of the IPv4 fragmentation and reassembly
// counters of /proc/net/snmp ("Ip:"). A UDP datagram larger than the path
// MTU leaves the sender in fragments (FragCreates of them, FragOKs
// datagrams cut; FragFails datagrams that needed cutting and could not be,
// DF set), and the receiver puts them back together (ReasmReqds fragments
// in, ReasmOKs datagrams made; ReasmFails datagrams given up, of which
// ReasmTimeout because a fragment never came within ipfrag_time). One lost
// fragment loses the whole datagram. IPv6 keeps its own (/proc/net/snmp6),
// not read here.
type IPCounters struct {
	OutDiscards  int64 `json:"out_discards"`
	FragOKs      int64 `json:"frag_oks"`
	FragFails    int64 `json:"frag_fails"`
	FragCreates  int64 `json:"frag_creates"`
	ReasmReqds   int64 `json:"reasm_reqds"`
	ReasmOKs     int64 `json:"reasm_oks"`
	ReasmFails   int64 `json:"reasm_fails"`
	ReasmTimeout int64 `json:"reasm_timeout"`
}

// Fragmented reports whether the counters show IPv4 fragmentation going
// wrong or happening at all on the sending side: a datagram cut into
// fragments (FragCreates), one that could not be (FragFails), or a
// reassembly given up (ReasmFails, ReasmTimeout).
func (c IPCounters) Fragmented() bool {
	return c.FragCreates > 0 || c.FragFails > 0 || c.ReasmFails > 0 || c.ReasmTimeout > 0
}

// TCPCounters are the changes of the "Tcp:" counters of /proc/net/snmp.
type TCPCounters struct {
	InSegs       int64 `json:"in_segs"`
	OutSegs      int64 `json:"out_segs"`
	RetransSegs  int64 `json:"retrans_segs"`
	InErrs       int64 `json:"in_errs"`
	InCsumErrors int64 `json:"in_csum_errors"`
}

// UDPCounters are the changes of the "Udp:" counters of /proc/net/snmp.
type UDPCounters struct {
	InDatagrams  int64 `json:"in_datagrams"`
	InErrors     int64 `json:"in_errors"`
	RcvbufErrors int64 `json:"rcvbuf_errors"`
	SndbufErrors int64 `json:"sndbuf_errors"`
	InCsumErrors int64 `json:"in_csum_errors"`
}

// TCPExtCounters are the changes of the retransmission counters under
// "TcpExt:" in /proc/net/netstat.
type TCPExtCounters struct {
	LostRetransmit   int64 `json:"lost_retransmit"`    // TCPLostRetransmit
	FastRetrans      int64 `json:"fast_retrans"`       // TCPFastRetrans
	SlowStartRetrans int64 `json:"slow_start_retrans"` // TCPSlowStartRetrans
	Timeouts         int64 `json:"timeouts"`           // TCPTimeouts: retransmission timer expiries
	SACKRecovery     int64 `json:"sack_recovery"`      // TCPSackRecovery: recoveries entered with SACK
}

// ChecksumErrors is the number of TCP segments and UDP datagrams the host
// received with a bad checksum. Non-zero over a run is worth calling out:
// it is how a NIC that computes wrong checksums (broken offload, often with
// jumbo frames) shows up.
func (c Counters) ChecksumErrors() int64 {
	return c.TCP.InCsumErrors + c.UDP.InCsumErrors
}

// TCPInfo is the part of the kernel's TCP_INFO a result keeps. Zero where
// the platform does not report it.
type TCPInfo struct {
	SndMSS        int     `json:"snd_mss"`
	RcvMSS        int     `json:"rcv_mss"`
	PMTU          int     `json:"pmtu"`
	CwndSegments  int     `json:"cwnd_segments"`
	CwndBytes     int64   `json:"cwnd_bytes"`
	RTTMicros     float64 `json:"rtt_us"`
	RTTVarMicros  float64 `json:"rttvar_us"`
	TotalRetrans  int64   `json:"total_retrans"`
	RcvSpaceBytes int64   `json:"rcv_space_bytes"`
	// Since the connection opened, in microseconds (Linux 4.9 and later;
	// 0 before): time with data to send, and of it, time held back by the
	// peer's receive window and by the send buffer.
	BusyTimeMicros      int64 `json:"busy_time_us,omitempty"`
	RwndLimitedMicros   int64 `json:"rwnd_limited_us,omitempty"`
	SndbufLimitedMicros int64 `json:"sndbuf_limited_us,omitempty"`
	// Since the connection opened (Linux 4.1 and later): payload bytes
	// the peer acknowledged, and received in sequence; the kernel's own
	// counts beside the program's.
	BytesAcked    int64 `json:"bytes_acked,omitempty"`
	BytesReceived int64 `json:"bytes_received,omitempty"`
	// At the moment of the sample: segments sent and not yet
	// acknowledged, and bytes in the send buffer not yet sent (Linux 4.6
	// and later): what the connection holds in flight and in its socket.
	UnackedSegments int64 `json:"unacked,omitempty"`
	NotsentBytes    int64 `json:"notsent_bytes,omitempty"`
}
