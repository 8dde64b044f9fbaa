package limit

import (
	"math"
	"slices"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// Hand-made results: each case builds one with the figures that matter
// and says what the diagnosis must be, with the arithmetic in comments.

const window = 2.0 // seconds

func streamResult(kind spec.Kind, goodput float64) *result.Result {
	t := spec.Default()
	t.Kind = kind
	if kind == spec.UDPStream {
		t.SendSize = spec.DefaultUDPSize
	}
	bytes := int64(goodput * window / 8)
	d := result.DirectionResult{
		Direction: spec.ClientToServer, Sender: result.Local, Receiver: result.Remote,
		Summary: result.Summary{BitsPerSecond: goodput, Bytes: bytes, ElapsedS: window, SenderElapsedS: window, SenderBytes: bytes},
		Streams: []result.Stream{{ID: 1, Direction: spec.ClientToServer,
			Sender:   result.StreamSide{ID: 1, Side: result.Local, Role: result.Sender, Bytes: bytes, SndBufEnd: 4 << 20},
			Receiver: result.StreamSide{ID: 1, Side: result.Remote, Role: result.Receiver, Bytes: bytes, RcvBufEnd: 6 << 20}}},
	}
	if kind != spec.UDPStream {
		d.Streams[0].Sender.TCPInfo = &measure.TCPInfo{SndMSS: 1448, PMTU: 1500}
	} else {
		d.Summary.UDPSummary = &result.UDPSummary{}
	}
	return &result.Result{Spec: t, Summary: d.Summary, Directions: []result.DirectionResult{d}, Remote: result.SideInfo{Address: "10.77.0.1:7575"}}
}

func withEnv(r *result.Result, s result.Side, ifc sysinfo.Interface) *result.Result {
	e := &sysinfo.Env{Interface: &ifc}
	if s == result.Local {
		r.Local.Env = e
	} else {
		r.Remote.Env = e
	}
	return r
}

func tbf(rate uint64) sysinfo.Interface {
	return sysinfo.Interface{Name: "veth-b", Driver: "veth", MTU: 1500, SpeedMbps: 10000, Qdisc: &sysinfo.Qdisc{Kind: "tbf", RateBitsPerSecond: rate}}
}

// cpuFig is one side's CPU: the busiest CPU (number, busy, system,
// softirq), its busiest thread (busy and waiting, percent of a CPU) and
// the other processes.
func cpuFig(pid, cpu int, busy, sys, softirq, thread, wait float64, others ...measure.TaskCPU) *measure.CPU {
	c := &measure.CPU{PID: pid, CPUs: 2, BusiestCPU: cpu, BusiestCPUPct: busy,
		BusiestCPUShares: &measure.CPUShares{UtilPct: busy, UserPct: busy - sys - softirq, SystemPct: sys, SoftIRQPct: softirq},
		PerCPUIDs:        []int{0, 1}, PerCPUUtilPct: []float64{busy, busy}, ElapsedS: window,
		Threads: []measure.TaskCPU{{ID: pid + 1, Name: "wirespeed", UtilPct: thread, WaitPct: wait, LastCPU: cpu}}}
	for _, o := range others {
		c.OtherProcessesUtilPct += o.UtilPct
		c.OtherProcesses = append(c.OtherProcesses, o)
	}
	return c
}

func withCPU(r *result.Result, local, remote *measure.CPU) *result.Result {
	r.Summary.LocalCPU, r.Summary.RemoteCPU = local, remote
	return r
}

func withTCP(r *result.Result, busy, rwnd, sndbuf float64, retrans int64) *result.Result {
	s := &r.Directions[0].Streams[0].Sender
	s.TCPLimited = &result.TCPLimited{BusyMicros: int64(busy * window * 1e4), RwndLimitedMicros: int64(rwnd * window * 1e4), SndbufLimitedMicros: int64(sndbuf * window * 1e4)}
	s.Retransmits = retrans
	return r
}

func idle(pid int) *measure.CPU { return cpuFig(pid, 0, 20, 10, 5, 15, 0) }

func TestDiagnoseStream(t *testing.T) {
	tests := []struct {
		name     string
		res      *result.Result
		want     result.LimitKind
		wantSide result.Side
		check    func(t *testing.T, l *result.Limit)
	}{
		{
			// tbf at 50 Mbit/s counts 1448 + 52 + 14 = 1514 bytes per
			// segment: 47.82 Mbit/s of payload; 47.5 is 99.3% of it.
			name: "tbf link",
			res:  withEnv(streamResult(spec.TCPStream, 47.5e6), result.Local, tbf(50e6)),
			want: result.LimitLink, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				r := l.Evidence.Rate
				if r == nil || r.Source != "qdisc" || r.Qdisc != "tbf" || math.Abs(r.AllowedBitsPerSecond-50e6*1448/1514) > 1 || math.Abs(r.GoodputPct-99.33) > 0.01 {
					t.Errorf("rate evidence %+v, want tbf allowing %.6g, goodput 99.33%%", r, 50e6*1448/1514)
				}
			},
		},
		{
			// 40 Mbit/s is 83.6% of what the link allows: not the link.
			name: "below the link",
			res:  withEnv(streamResult(spec.TCPStream, 40e6), result.Local, tbf(50e6)),
			want: result.LimitUnknown,
		},
		{
			// A 1 Gbit/s NIC on the receiver: 1448 of 1538 bytes on the
			// wire (with FCS, preamble and gap) is 941.5 Mbit/s.
			name: "interface speed",
			res: withEnv(withEnv(streamResult(spec.TCPStream, 935e6), result.Local, sysinfo.Interface{Name: "eth0", Driver: "ixgbe", MTU: 1500, SpeedMbps: 10000}),
				result.Remote, sysinfo.Interface{Name: "eth1", Driver: "e1000e", MTU: 1500, SpeedMbps: 1000}),
			want: result.LimitLink, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if r := l.Evidence.Rate; r == nil || r.Source != "interface_speed" || r.Interface != "eth1" || math.Abs(r.AllowedBitsPerSecond-1e9*1448/1538) > 1 {
					t.Errorf("rate evidence %+v, want eth1's speed allowing %.6g", r, 1e9*1448/1538)
				}
			},
		},
		{
			// veth says 10000 Mb/s and means nothing by it.
			name: "veth speed ignored",
			res:  withEnv(streamResult(spec.TCPStream, 9.6e9), result.Local, sysinfo.Interface{Name: "veth-b", Driver: "veth", MTU: 1500, SpeedMbps: 10000}),
			want: result.LimitUnknown,
		},
		{
			// -b 10M under a 50M link: 9.95 is 99.5% of the cap.
			name: "udp rate cap",
			res: func() *result.Result {
				r := withEnv(streamResult(spec.UDPStream, 9.95e6), result.Local, tbf(50e6))
				r.Spec.RateBitsPerSecond = 10e6
				return r
			}(),
			want: result.LimitRateCap, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if r := l.Evidence.Rate; r == nil || r.Source != "rate" || r.AllowedBitsPerSecond != 10e6 {
					t.Errorf("rate evidence %+v, want the -b cap of 10e6", r)
				}
			},
		},
		{
			// -b 40M over a 20M link: 1472 of 1472+8+20+14 bytes is
			// 19.44 Mbit/s; 19.4 reaches it, and is half of the cap.
			name: "udp over the link",
			res: func() *result.Result {
				r := withEnv(streamResult(spec.UDPStream, 19.4e6), result.Local, tbf(20e6))
				r.Spec.RateBitsPerSecond = 40e6
				return r
			}(),
			want: result.LimitLink,
			check: func(t *testing.T, l *result.Limit) {
				if r := l.Evidence.Rate; r == nil || math.Abs(r.AllowedBitsPerSecond-20e6*1472/1514) > 1 {
					t.Errorf("rate evidence %+v, want %.6g allowed", r, 20e6*1472/1514)
				}
			},
		},
		{
			// --fq-rate 100M counts IP packets: 1448 of 1500 is 96.5M.
			name: "fq rate",
			res: func() *result.Result {
				r := streamResult(spec.TCPStream, 95e6)
				r.Spec.FQRateBitsPerSecond = 100e6
				return r
			}(),
			want: result.LimitRateCap,
		},
		{
			name: "sender cpu",
			res:  withCPU(streamResult(spec.TCPStream, 9e9), cpuFig(100, 1, 99.6, 38, 61, 97, 1), idle(200)),
			want: result.LimitSenderCPU, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if c := l.Evidence.CPU; c == nil || c.CPU != 1 || c.UtilPct != 99.6 || c.SystemPct != 38 || c.SoftIRQPct != 61 || c.ThreadPct != 97 {
					t.Errorf("cpu evidence %+v, want cpu1 99.6%%: 38 sys, 61 softirq, thread 97", c)
				}
			},
		},
		{
			// The sender's CPU bound, its device sending 812k packets/s
			// of 1514 bytes: the note names them.
			name: "sender cpu with its device's packets",
			res: func() *result.Result {
				r := withCPU(streamResult(spec.TCPStream, 9e9), cpuFig(100, 1, 99.6, 38, 61, 97, 1), idle(200))
				r.Local.Wire = &result.Wire{Wire: netdev.Wire{Device: "wst-b"}, TxPacketsPerSecond: 812_000, TxBytesPerPacket: 1514}
				return r
			}(),
			want: result.LimitSenderCPU, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "wst-b sent 812000 packets/s of 1514 bytes") {
					t.Errorf("notes %q, want the device's packets", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			// No CPU saturated, but the receiver's device dropped 300 of
			// 100,300 packets (0.30%): its ring overflowed, the
			// receiver's CPU did not keep up.
			name: "receiver device drops",
			res: func() *result.Result {
				r := withCPU(streamResult(spec.TCPStream, 5e9), idle(100), idle(200))
				r.Remote.Wire = &result.Wire{Wire: netdev.Wire{Device: "eth1", Link: netdev.LinkCounters{RxPackets: 100_000, RxDropped: 100, RxMissed: 200}}}
				return r
			}(),
			want: result.LimitReceiverCPU, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "eth1 dropped 0.30% of the packets it received") {
					t.Errorf("notes %q, want the device's drops", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			// The sender's thread ran on cpu1, not the busiest CPU: the
			// evidence is cpu1's split, and its 30% softirq with the
			// thread's 65% makes it bound.
			name: "sender cpu not the busiest",
			res: func() *result.Result {
				c := cpuFig(100, 0, 100, 50, 10, 65, 0)
				c.Threads[0].LastCPU = 1
				c.ThreadCPUShares = []measure.CPUShares{{CPU: 1, UtilPct: 99, UserPct: 9, SystemPct: 60, SoftIRQPct: 30}}
				return withCPU(streamResult(spec.TCPStream, 5e9), c, idle(200))
			}(),
			want: result.LimitSenderCPU, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if c := l.Evidence.CPU; c == nil || c.CPU != 1 || c.UtilPct != 99 || c.SystemPct != 60 || c.SoftIRQPct != 30 {
					t.Errorf("cpu evidence %+v, want cpu1's split", c)
				}
			},
		},
		{
			// The receiver's thread at 70% with its CPU's 25% softirq
			// beside it: 95, bound.
			name: "receiver cpu with softirq",
			res:  withCPU(streamResult(spec.TCPStream, 9e9), idle(100), cpuFig(200, 0, 99, 30, 25, 70, 0)),
			want: result.LimitReceiverCPU, wantSide: result.Remote,
		},
		{
			// Both bound on one host: the busier side.
			name: "both bound, receiver busier",
			res: withCPU(streamResult(spec.TCPStream, 9e9), cpuFig(100, 0, 99, 30, 10, 85, 0, measure.TaskCPU{ID: 200, Name: "wirespeed", UtilPct: 99}),
				cpuFig(200, 0, 99, 30, 10, 95, 0, measure.TaskCPU{ID: 100, Name: "wirespeed", UtilPct: 95})),
			want: result.LimitReceiverCPU,
		},
		{
			// Both bound at the same load (90% thread and 10% softirq
			// each): the sender, which sets the pace, is named.
			name: "both bound, a tie",
			res: withCPU(streamResult(spec.TCPStream, 9e9), cpuFig(100, 0, 99, 30, 10, 90, 0, measure.TaskCPU{ID: 200, Name: "wirespeed", UtilPct: 90}),
				cpuFig(200, 0, 99, 30, 10, 90, 0, measure.TaskCPU{ID: 100, Name: "wirespeed", UtilPct: 90})),
			want: result.LimitSenderCPU, wantSide: result.Local,
		},
		{
			// The sender's thread ran 40% and waited 55%: a busy loop
			// used 95% of a CPU beside it.
			name: "other processes",
			res: withCPU(streamResult(spec.TCPStream, 2e9),
				cpuFig(100, 1, 100, 20, 5, 40, 55, measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: 95, LastCPU: 1}), idle(200)),
			want: result.LimitOtherProcesses, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if o := l.Evidence.Others; o == nil || len(o.Busiest) != 1 || o.Busiest[0].Name != "busyloop" || o.UtilPct != 95 || o.HostPct != 47.5 {
					t.Errorf("others evidence %+v, want busyloop, 95%% of a CPU, 47.5%% of the host", o)
				}
			},
		},
		{
			// A busy host and -S 4K: other processes took the CPU the
			// test waited for, and the window the user fixed was full
			// 80% of the window: both are named.
			name: "other processes and a fixed receive window",
			res: func() *result.Result {
				r := withTCP(withCPU(streamResult(spec.TCPStream, 4e8),
					cpuFig(100, 1, 100, 20, 5, 40, 55, measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: 95, LastCPU: 1}), idle(200)), 100, 80, 0, 0)
				r.Spec.RemoteSockBuf = 4096
				return r
			}(),
			want: result.LimitOtherProcesses, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if !slices.Equal(l.Also, []result.LimitKind{result.LimitReceiveWindow}) {
					t.Errorf("also %v, want receive_window beside the other processes", l.Also)
				}
			},
		},
		{
			// The data path pinned to cpu1 (-T 1): the loop on cpu1 is
			// named first though a process elsewhere used more.
			name: "the process on the pinned CPU first",
			res: func() *result.Result {
				r := withCPU(streamResult(spec.TCPStream, 2e9),
					cpuFig(100, 1, 100, 20, 5, 40, 55, measure.TaskCPU{ID: 9, Name: "cc1", UtilPct: 80, LastCPU: 0},
						measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: 30, LastCPU: 1}), idle(200))
				r.Local.DataPath = &result.DataPath{PinnedCPUs: []result.PinnedCPU{{CPU: 1, Streams: []int{1}}}}
				return r
			}(),
			want: result.LimitOtherProcesses, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if o := l.Evidence.Others; o == nil || len(o.Busiest) != 2 || o.Busiest[0].ID != 300 || o.Busiest[1].ID != 9 || o.UtilPct != 110 {
					t.Errorf("others evidence %+v, want the busy loop, then cc1, 110%% in all", o)
				}
			},
		},
		{
			// Not pinned: the busiest first, wherever it ran.
			name: "the busiest first when not pinned",
			res: withCPU(streamResult(spec.TCPStream, 2e9),
				cpuFig(100, 1, 100, 20, 5, 40, 55, measure.TaskCPU{ID: 9, Name: "cc1", UtilPct: 80, LastCPU: 0},
					measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: 30, LastCPU: 1}), idle(200)),
			want: result.LimitOtherProcesses,
			check: func(t *testing.T, l *result.Limit) {
				if o := l.Evidence.Others; o == nil || len(o.Busiest) != 2 || o.Busiest[0].ID != 9 {
					t.Errorf("others evidence %+v, want cc1 first", o)
				}
			},
		},
		{
			// Not CPU-bound (30% run, 30% waiting: it also slept on
			// the socket), but kept waiting for its CPU a third of the
			// window while other processes used 80% of one.
			name: "waiting for the CPU",
			res: withCPU(streamResult(spec.TCPStream, 2e9),
				cpuFig(100, 1, 100, 20, 5, 30, 30, measure.TaskCPU{ID: 300, Name: "make", UtilPct: 80, LastCPU: 1}), idle(200)),
			want: result.LimitOtherProcesses, wantSide: result.Local,
		},
		{
			// The same wait with nothing else busy: not other processes.
			name: "waiting with nothing else busy",
			res: withCPU(streamResult(spec.TCPStream, 2e9),
				cpuFig(100, 1, 100, 20, 5, 30, 30, measure.TaskCPU{ID: 300, Name: "sh", UtilPct: 5, LastCPU: 1}), idle(200)),
			want: result.LimitUnknown,
		},
		{
			// The only other process busy is the test's peer: it is
			// the test's own CPU, not another process's.
			name: "peer is not another process",
			res: withCPU(streamResult(spec.TCPStream, 2e9),
				cpuFig(100, 1, 100, 20, 5, 40, 55, measure.TaskCPU{ID: 200, Name: "wirespeed", UtilPct: 95, LastCPU: 1}), idle(200)),
			want: result.LimitSenderCPU,
		},
		{
			// A peer that reported process time only (iperf3) or no
			// threads: its CPU is not known, so no verdict from it.
			name: "receiver without threads",
			res: func() *result.Result {
				c := cpuFig(200, 0, 99, 60, 10, 0, 0)
				c.Threads = nil
				return withTCP(withCPU(streamResult(spec.TCPStream, 300e6), idle(100), c), 100, 83, 0, 0)
			}(),
			want: result.LimitUnknown,
		},
		{
			name: "receive window",
			res:  withTCP(withCPU(streamResult(spec.TCPStream, 300e6), idle(100), idle(200)), 100, 83, 0, 0),
			want: result.LimitReceiveWindow, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if e := l.Evidence.TCP; e == nil || math.Abs(e.RwndLimitedPct-83) > 0.01 || e.RcvBufBytes != 6<<20 {
					t.Errorf("tcp evidence %+v, want rwnd_limited 83%%", e)
				}
			},
		},
		{
			// Without CPU figures a full window could be a slow reader.
			name: "receive window without cpu",
			res:  withTCP(streamResult(spec.TCPStream, 300e6), 100, 83, 0, 0),
			want: result.LimitUnknown,
			check: func(t *testing.T, l *result.Limit) {
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "rwnd_limited 83%") {
					t.Errorf("notes %q, want the rwnd_limited figure", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			name: "receive window the user fixed",
			res: func() *result.Result {
				r := withTCP(streamResult(spec.TCPStream, 300e6), 100, 83, 0, 0)
				r.Spec.RemoteSockBuf = 4096
				return r
			}(),
			want: result.LimitReceiveWindow, wantSide: result.Remote,
		},
		{
			// Issue 32's lab: -S 4K over veth, rwnd_limited 71% and the
			// receiver's busiest thread at 83% (with its CPU's softirq,
			// bound): the window the user set is the main limit, the
			// receiver's CPU beside it.
			name: "fixed receive window with the receiver's cpu near saturation",
			res: func() *result.Result {
				r := withTCP(withCPU(streamResult(spec.TCPStream, 1.73e9), idle(100), cpuFig(200, 0, 97, 40, 30, 83, 2)), 100, 71, 0, 0)
				r.Spec.RemoteSockBuf = 4096
				r.Directions[0].Streams[0].Receiver.RcvBufEnd = 8192
				return r
			}(),
			want: result.LimitReceiveWindow, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if !slices.Equal(l.Also, []result.LimitKind{result.LimitReceiverCPU}) {
					t.Errorf("also %v, want receiver_cpu beside the window", l.Also)
				}
				if e := l.Evidence.TCP; e == nil || math.Abs(e.RwndLimitedPct-71) > 0.01 || e.RcvBufBytes != 8192 {
					t.Errorf("tcp evidence %+v, want rwnd_limited 71%% with an 8 KB buffer", e)
				}
				// 83% of its own, 2% waiting, 30% softirq of its CPU.
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "also near saturation (115%") {
					t.Errorf("notes %q, want the receiver's CPU named beside the window", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			// The same figures with the buffer the kernel's to tune: a
			// slow reader fills the window too, and the CPU is the limit.
			name: "receive window of a receiver whose cpu is bound",
			res:  withTCP(withCPU(streamResult(spec.TCPStream, 1.73e9), idle(100), cpuFig(200, 0, 97, 40, 30, 83, 2)), 100, 71, 0, 0),
			want: result.LimitReceiverCPU, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if len(l.Also) != 0 {
					t.Errorf("also %v with the buffer left to the kernel, want nothing beside the CPU", l.Also)
				}
			},
		},
		{
			// This kernel's veth with -S 4K: rwnd_limited 46% (short of
			// rule 3a's 50%) and the receiver's CPU bound: the CPU is
			// the main limit and the window the user set is named
			// beside it.
			name: "fixed receive window short of the rule, beside a bound receiver",
			res: func() *result.Result {
				r := withTCP(withCPU(streamResult(spec.TCPStream, 1.45e9), idle(100), cpuFig(200, 0, 97, 40, 30, 83, 2)), 100, 46, 0, 0)
				r.Spec.RemoteSockBuf = 4096
				return r
			}(),
			want: result.LimitReceiverCPU, wantSide: result.Remote,
			check: func(t *testing.T, l *result.Limit) {
				if !slices.Equal(l.Also, []result.LimitKind{result.LimitReceiveWindow}) {
					t.Errorf("also %v, want receive_window beside the receiver's CPU", l.Also)
				}
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "also full 46%") {
					t.Errorf("notes %q, want the window's 46%% named", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			// Another machine's veth with -S 4K: rwnd_limited 13% and
			// the sender's thread bound (on veth it runs both ends'
			// packet processing), while 2.1 Gbit/s at a 33 us RTT is
			// 2.1e9/8 * 33e-6 = 8662.5 bytes in flight, 105.7% of the
			// 8192-byte buffer: the window is named beside the CPU.
			name: "fixed receive window filled in flight, beside a bound sender",
			res: func() *result.Result {
				r := withTCP(withCPU(streamResult(spec.TCPStream, 2.1e9), cpuFig(100, 1, 97, 40, 30, 89, 2), idle(200)), 100, 13, 0, 0)
				r.Spec.RemoteSockBuf = 4096
				st := &r.Directions[0].Streams[0]
				st.Sender.TCPInfo.RTTMicros = 33
				st.Receiver.RcvBufEnd = 8192
				return r
			}(),
			want: result.LimitSenderCPU, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if !slices.Equal(l.Also, []result.LimitKind{result.LimitReceiveWindow}) {
					t.Errorf("also %v, want receive_window beside the sender's CPU", l.Also)
				}
				if e := l.Evidence.TCP; e == nil || math.Abs(e.InFlightPct-105.74) > 0.01 {
					t.Errorf("tcp evidence %+v, want 105.74%% of the buffer in flight", e)
				}
				if notes := strings.Join(report.WarningTexts(l.Notes), "; "); !strings.Contains(notes, "filled 106% of its 8.00 KBytes") || !strings.Contains(notes, "full 13%") {
					t.Errorf("notes %q, want the buffer's fill and the window's 13%% named", notes)
				}
			},
		},
		{
			// The same with the buffer left to the kernel: the CPU
			// alone.
			name: "kernel's receive window filled in flight, beside a bound sender",
			res: func() *result.Result {
				r := withTCP(withCPU(streamResult(spec.TCPStream, 2.1e9), cpuFig(100, 1, 97, 40, 30, 89, 2), idle(200)), 100, 13, 0, 0)
				st := &r.Directions[0].Streams[0]
				st.Sender.TCPInfo.RTTMicros = 33
				st.Receiver.RcvBufEnd = 8192
				return r
			}(),
			want: result.LimitSenderCPU, wantSide: result.Local,
			check: func(t *testing.T, l *result.Limit) {
				if len(l.Also) != 0 {
					t.Errorf("also %v with the buffer left to the kernel, want nothing beside the CPU", l.Also)
				}
			},
		},
		{
			name: "send buffer",
			res:  withTCP(streamResult(spec.TCPStream, 300e6), 100, 0, 70, 0),
			want: result.LimitSendBuffer, wantSide: result.Local,
		},
		{
			// 2e8 bytes at 1448 a segment is 138122 segments; 2762
			// retransmitted is 2.0%.
			name: "congestion",
			res:  withTCP(withCPU(streamResult(spec.TCPStream, 800e6), idle(100), idle(200)), 100, 0, 0, 2762),
			want: result.LimitCongestion,
			check: func(t *testing.T, l *result.Limit) {
				if e := l.Evidence.TCP; e == nil || math.Abs(e.RetransPct-2.0) > 0.01 {
					t.Errorf("tcp evidence %+v, want 2.0%% retransmitted", e)
				}
			},
		},
		{
			name: "nothing stands out",
			res:  withTCP(withCPU(streamResult(spec.TCPStream, 800e6), idle(100), idle(200)), 100, 10, 0, 3),
			want: result.LimitUnknown,
			check: func(t *testing.T, l *result.Limit) {
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "no CPU saturated") {
					t.Errorf("notes %q, want them to say no CPU was saturated", report.WarningTexts(l.Notes))
				}
			},
		},
		{
			name: "nothing received",
			res:  streamResult(spec.TCPStream, 0),
			want: result.LimitUnknown,
		},
		{
			// A link limit with a busy loop beside it: link, and a note
			// naming the loop.
			name: "link with others busy",
			res: withCPU(withEnv(streamResult(spec.TCPStream, 47.5e6), result.Local, tbf(50e6)),
				cpuFig(100, 1, 100, 5, 1, 5, 0, measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: 99}), idle(200)),
			want: result.LimitLink,
			check: func(t *testing.T, l *result.Limit) {
				if !strings.Contains(strings.Join(report.WarningTexts(l.Notes), "; "), "busyloop, pid 300, 99% (cpu0)") {
					t.Errorf("notes %q, want the busy loop named", report.WarningTexts(l.Notes))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Diagnose(tt.res)
			l := tt.res.Summary.Limit
			if l == nil || tt.res.Directions[0].Summary.Limit == nil {
				t.Fatal("no limit set")
			}
			if l.Kind != tt.want || (tt.wantSide != "" && l.Side != tt.wantSide) {
				t.Fatalf("limit %s (side %q), want %s (side %q); notes %q", l.Kind, l.Side, tt.want, tt.wantSide, report.WarningTexts(l.Notes))
			}
			if tt.check != nil {
				tt.check(t, l)
			}
		})
	}
}

func TestDiagnoseBidir(t *testing.T) {
	r := withEnv(streamResult(spec.TCPBidir, 47e6), result.Local, tbf(50e6))
	r = withEnv(r, result.Remote, tbf(50e6))
	back := r.Directions[0]
	back.Direction, back.Sender, back.Receiver = spec.ServerToClient, result.Remote, result.Local
	back.Streams = []result.Stream{r.Directions[0].Streams[0]}
	back.Streams[0].Sender.Side, back.Streams[0].Receiver.Side = result.Remote, result.Local
	r.Directions = append(r.Directions, back)
	Diagnose(r)
	if a, b := r.Directions[0].Summary.Limit, r.Directions[1].Summary.Limit; a.Kind != result.LimitLink || a.Side != result.Local || b.Kind != result.LimitLink || b.Side != result.Remote {
		t.Fatalf("directions %s/%s and %s/%s, want link on each sender's side", a.Kind, a.Side, b.Kind, b.Side)
	}
	// Each direction's own link, on different sides: the run names both.
	if l := r.Summary.Limit; l.Kind != result.LimitUnknown || !strings.Contains(report.WarningTexts(l.Notes)[0], "client_to_server link (local), server_to_client link (remote)") {
		t.Errorf("run limit %+v, want unknown naming both directions", l)
	}
	// The server's direction slower: no longer at its link.
	r.Directions[1].Summary.BitsPerSecond = 20e6
	r.Remote.Env = nil
	Diagnose(r)
	if b := r.Directions[1].Summary.Limit; b.Kind != result.LimitUnknown {
		t.Errorf("server_to_client %s, want unknown", b.Kind)
	}
	r.Directions[1].Summary.BitsPerSecond = 47e6
	r.Remote.Env = r.Local.Env
	r.Directions[1].Sender = result.Local // as if both went out one interface
	Diagnose(r)
	if l := r.Summary.Limit; l.Kind != result.LimitLink || report.WarningTexts(l.Notes)[0] != "both directions" {
		t.Errorf("run limit %+v, want link for both directions", l)
	}
}

func rrResult(tps, meanMicros float64) *result.Result {
	t := spec.Default()
	t.Kind = spec.TCPRR
	n := int64(tps * window)
	s := result.Summary{Bytes: n, ElapsedS: window, BitsPerSecond: float64(n) * 8 / window,
		RRSummary: &result.RRSummary{Transactions: n, TransactionsPerSecond: tps, Latency: stats.Latency{Count: n, Mean: meanMicros}}}
	d := result.DirectionResult{Direction: spec.RequestResponse, Sender: result.Local, Receiver: result.Remote, Summary: s,
		Streams: []result.Stream{{ID: 1, Direction: spec.RequestResponse}}}
	return &result.Result{Spec: t, Summary: s, Directions: []result.DirectionResult{d}}
}

func TestDiagnoseRR(t *testing.T) {
	tests := []struct {
		name string
		res  *result.Result
		want result.LimitKind
	}{
		// One transaction in flight at a mean of 50 µs allows 20000/s:
		// 19500 is 97.5% of it.
		{name: "latency", res: withCPU(rrResult(19500, 50), idle(100), idle(200)), want: result.LimitLatency},
		{name: "latency without cpu", res: rrResult(19500, 50), want: result.LimitUnknown},
		{name: "requester cpu", res: withCPU(rrResult(19500, 50), cpuFig(100, 0, 99, 50, 30, 96, 0), idle(200)), want: result.LimitRequesterCPU},
		{name: "responder cpu", res: withCPU(rrResult(19500, 50), idle(100), cpuFig(200, 0, 99, 50, 30, 96, 0)), want: result.LimitResponderCPU},
		{
			name: "busy polling spins",
			res: func() *result.Result {
				r := withCPU(rrResult(19500, 50), cpuFig(100, 0, 100, 50, 30, 100, 0), idle(200))
				r.Spec.BusyPollMicros = 50
				return r
			}(),
			want: result.LimitLatency,
		},
		{name: "other processes", res: withCPU(rrResult(5000, 50), cpuFig(100, 0, 100, 20, 5, 30, 65, measure.TaskCPU{ID: 9, Name: "make", UtilPct: 150}), idle(200)), want: result.LimitOtherProcesses},
		{name: "nothing completed", res: rrResult(0, 0), want: result.LimitUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Diagnose(tt.res)
			if l := tt.res.Summary.Limit; l == nil || l.Kind != tt.want {
				t.Fatalf("limit %+v, want %s", l, tt.want)
			}
		})
	}
	r := withCPU(rrResult(19500, 50), idle(100), idle(200))
	Diagnose(r)
	if e := r.Summary.Limit.Evidence.RTT; e == nil || e.PredictedPerSecond != 20000 || e.AchievedPct != 97.5 {
		t.Errorf("rtt evidence %+v, want 20000/s predicted, 97.5%% achieved", e)
	}
}

func TestOfMean(t *testing.T) {
	mk := func(k result.LimitKind) result.Result {
		r := streamResult(spec.TCPStream, 1e9)
		l := &result.Limit{Kind: k}
		r.Summary.Limit, r.Directions[0].Summary.Limit = l, l
		return *r
	}
	rs := []result.Result{mk(result.LimitLink), mk(result.LimitSenderCPU), mk(result.LimitLink)}
	out := result.Mean(rs)
	OfMean(&out, rs)
	if l := out.Summary.Limit; l == nil || l.Kind != result.LimitLink || report.WarningTexts(l.Notes)[0] != "2 of 3 iterations" {
		t.Errorf("mean limit %+v, want link in 2 of 3 iterations", l)
	}
	if l := out.Directions[0].Summary.Limit; l == nil || l.Kind != result.LimitLink {
		t.Errorf("mean direction limit %+v, want link", l)
	}
}

// TestCPUMissingNote: without both sides' CPU figures the note asks for
// --cpu only when the run did not ask for it; when it did (run --iperf3,
// whose iperf3 server sends none), it names the side that sent none.
func TestCPUMissingNote(t *testing.T) {
	for _, cpu := range []bool{false, true} {
		r := withCPU(streamResult(spec.TCPStream, 500e6), idle(10), nil)
		r.Spec.CPU = cpu
		Diagnose(r)
		notes := strings.Join(report.WarningTexts(r.Summary.Limit.Notes), "; ")
		asks := strings.Contains(notes, "run with --cpu")
		names := strings.Contains(notes, "--cpu was on; none from the remote side")
		if asks == cpu || names != cpu {
			t.Errorf("--cpu %v: notes %q", cpu, notes)
		}
	}
}
