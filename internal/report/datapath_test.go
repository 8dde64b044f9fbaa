package report

import (
	"bytes"
	"fmt"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"
)

// TestDataPathText: the heading names every option a run asks for, and
// the result says what each side did, for a TCP stream with pinning,
// zero-copy, splice and pacing, a busy-polled TCP_RR and a UDP_STREAM
// with GSO and GRO whose pacing nothing enforces, and one whose server
// sends in batches.
func TestDataPathText(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	stream := spec.Default()
	stream.LocalCPUs, stream.RemoteCPUs = "1", "0:1"
	stream.ZeroCopy, stream.Rx, stream.FQRateBitsPerSecond = spec.ZeroCopyMsg, spec.RxSplice, 5e9
	rr := spec.Default()
	rr.Kind, rr.BusyPollMicros = spec.TCPRR, 50
	udp := spec.Default()
	udp.Kind, udp.SendSize, udp.GSOSize, udp.GRO, udp.FQRateBitsPerSecond = spec.UDPStream, 44*1472, 1472, true, 1e8
	plain := spec.Default()
	batched := spec.Default() // UDP batches (issue 15)
	batched.Kind, batched.SendSize, batched.Reverse, batched.SendBatch, batched.RecvBatch = spec.UDPStream, 64, true, 64, 8

	results := []result.Result{
		{Spec: stream,
			Local: result.SideInfo{DataPath: &result.DataPath{
				PinnedCPUs: []result.PinnedCPU{{CPU: 1, Streams: []int{1}, UtilPct: f(99.2)}},
				ZeroCopy:   spec.ZeroCopyMsg, ZeroCopySends: 3761, ZeroCopyCompleted: 3761, ZeroCopyCopied: 3761,
				Pacing: &result.Pacing{AskedBitsPerSecond: 5e9, GrantedBytesPerSecond: 625000000, Interface: "lo", Qdisc: "noqueue",
					HonouredBy: "tcp", AchievedBitsPerSecond: 4.93e9},
			}},
			Remote: result.SideInfo{DataPath: &result.DataPath{
				PinnedCPUs: []result.PinnedCPU{{CPU: 0, Streams: []int{1}, UtilPct: f(87.5)}}, Rx: spec.RxSplice,
			}}},
		{Spec: rr,
			Local:  result.SideInfo{DataPath: &result.DataPath{BusyPoll: &result.BusyPoll{AskedMicros: 50, GrantedMicros: 50, SysctlBusyPoll: i(0), SysctlBusyRead: i(0)}}},
			Remote: result.SideInfo{DataPath: &result.DataPath{BusyPoll: &result.BusyPoll{AskedMicros: 50, GrantedMicros: 50, NAPIID: 8193}}}},
		{Spec: udp,
			Local: result.SideInfo{DataPath: &result.DataPath{GSOSize: 1472,
				Pacing: &result.Pacing{AskedBitsPerSecond: 1e8, GrantedBytesPerSecond: 12500000, Interface: "lo", Qdisc: "noqueue"}}},
			Remote: result.SideInfo{DataPath: &result.DataPath{GRO: true, Coalesced: 1935}}},
		{Spec: stream,
			Local: result.SideInfo{DataPath: &result.DataPath{ZeroCopy: spec.ZeroCopyOff, ZeroCopyNote: "--zerocopy msg: the kernel refused MSG_ZEROCOPY"}}},
		{Spec: plain},
		{Spec: batched,
			Local:  result.SideInfo{DataPath: &result.DataPath{RecvBatch: 8}},
			Remote: result.SideInfo{DataPath: &result.DataPath{SendBatch: 64}}},
	}
	// The heading is the default text's; the data path records are -v's.
	var buf bytes.Buffer
	for k, res := range results {
		fmt.Fprintf(&buf, "--- %d\n", k+1)
		var head bytes.Buffer
		Heading(&head, res.Spec, "127.0.0.1:7575")
		checkWidth(t, "heading", head.String())
		buf.Write(head.Bytes())
		DataPath(&buf, res)
	}
	testkit.Golden(t, "datapath-v.txt.golden", buf.String())
}

// TestEnvDataPath: the environment record's line on what the kernel
// offers the data path options.
func TestEnvDataPath(t *testing.T) {
	var b bytes.Buffer
	Env(&b, sysinfo.Env{Hostname: "h", KernelRelease: "6.18.44", CPU: sysinfo.CPUInfo{Count: 2},
		DataPath: &sysinfo.DataPathSupport{MsgZeroCopy: true, UDPGSO: true, UDPGRO: true, TCPInternalPacing: true, DefaultQdisc: "fq_codel", Probed: true}}, EnvOptions{})
	Env(&b, sysinfo.Env{Hostname: "old", KernelRelease: "4.15.0",
		DataPath: &sysinfo.DataPathSupport{MsgZeroCopy: true}}, EnvOptions{})
	testkit.Golden(t, "env-datapath.golden", b.String())
}
