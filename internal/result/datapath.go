package result

import (
	"strings"
	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// DataPath is what one side did about the spec's data path options
// (pinning, zero-copy, receive mode, pacing, busy polling, UDP GSO/GRO)
// and what its kernel said about them. A side reports it whenever the
// spec asks for any of them, so that a result never claims an option a
// side did not apply.
type DataPath struct {
	// PinnedCPUs are the CPUs this side's data-path threads were bound
	// to, one entry per CPU.
	PinnedCPUs []PinnedCPU `json:"pinned_cpus,omitempty"`

	// ZeroCopy is how this side's TCP senders handed payload to the
	// kernel: the spec's mode, or "copy" when the kernel refused it, and
	// ZeroCopyNote says why. Empty on a side that sends nothing.
	ZeroCopy     string `json:"zerocopy,omitempty"`
	ZeroCopyNote string `json:"zerocopy_note,omitempty"`
	// With MSG_ZEROCOPY: sends made, completions the kernel reported, and
	// how many of those it copied after all (every delivery to a local
	// socket is copied: loopback, veth), over the run, all streams.
	ZeroCopySends     int64 `json:"zerocopy_sends,omitempty"`
	ZeroCopyCompleted int64 `json:"zerocopy_completed,omitempty"`
	ZeroCopyCopied    int64 `json:"zerocopy_copied,omitempty"`

	// Rx is how this side's TCP receivers took the payload: copy, splice
	// or discard. Empty on a side that receives nothing.
	Rx string `json:"rx,omitempty"`

	Pacing   *Pacing   `json:"pacing,omitempty"`
	BusyPoll *BusyPoll `json:"busy_poll,omitempty"`

	// GSOSize is the UDP_SEGMENT datagram size of this side's UDP
	// senders; GRO says UDP_GRO was on for its receivers, and Coalesced
	// counts the receive buffers that held several datagrams.
	GSOSize   int   `json:"gso_size,omitempty"`
	GRO       bool  `json:"gro,omitempty"`
	Coalesced int64 `json:"gro_coalesced,omitempty"`

	// UDP batches: SendBatch is the sends per sendmmsg call of
	// this side's UDP_STREAM senders, RecvBatch the most datagrams per
	// recvmmsg call of its receivers; absent for one per call.
	SendBatch int `json:"send_batch,omitempty"`
	RecvBatch int `json:"recv_batch,omitempty"`
	// RxTimestamp is how this side's UDP_STREAM receivers timed each
	// datagram's arrival, the time the jitter is taken from:
	// spec.RxTimestampClock or spec.RxTimestampKernel (what the kernel
	// granted, whatever was asked); absent on a side that received none.
	RxTimestamp string `json:"rx_timestamp,omitempty"`
}

// PinnedCPU is one CPU data-path threads were pinned to.
type PinnedCPU struct {
	CPU     int   `json:"cpu"`
	Streams []int `json:"streams"` // the stream ids whose threads ran on it
	// UtilPct is the CPU's utilization over the side's window, from the
	// CPU figures (absent when CPU was not measured).
	UtilPct *float64 `json:"util_pct,omitempty"`
}

// Pacing is what a sending side's kernel made of --fq-rate.
type Pacing struct {
	AskedBitsPerSecond float64 `json:"asked_bps"`
	// GrantedBytesPerSecond is SO_MAX_PACING_RATE as read back from the
	// sockets (the kernel's unit; it counts headers too).
	GrantedBytesPerSecond uint64 `json:"granted_bytes_per_s"`
	// Interface and Qdisc are the interface the route to the peer leaves
	// by and the kind of its root queueing discipline.
	Interface string `json:"interface,omitempty"`
	Qdisc     string `json:"qdisc,omitempty"`
	// HonouredBy is what enforces the cap: "fq" (the qdisc), "tcp" (TCP's
	// own pacing, Linux 4.20 and later), or "" when nothing does; Note
	// says why.
	HonouredBy string `json:"honoured_by"`
	Note       string `json:"note,omitempty"`
	// AchievedBitsPerSecond is the fastest stream's payload rate as its
	// receiver counted it, for comparison with the cap (joined from both
	// sides' figures).
	AchievedBitsPerSecond float64 `json:"achieved_bps,omitempty"`
}

// BusyPoll is what a side's kernel made of --busy-poll.
type BusyPoll struct {
	AskedMicros int `json:"asked_us"`
	// GrantedMicros is SO_BUSY_POLL as read back from the sockets.
	GrantedMicros int `json:"granted_us"`
	// SysctlBusyPoll and SysctlBusyRead are net.core.busy_poll and
	// net.core.busy_read, the system-wide settings (absent where
	// unreadable).
	SysctlBusyPoll *int64 `json:"sysctl_busy_poll_us,omitempty"`
	SysctlBusyRead *int64 `json:"sysctl_busy_read_us,omitempty"`
	// NAPIID is the device queue the sockets' packets last came from
	// (SO_INCOMING_NAPI_ID); 0 means none, as on loopback and veth
	// without NAPI, where busy polling has nothing to poll.
	NAPIID int `json:"napi_id"`
}

// StreamDataPath is one side's data path record of one stream.
type StreamDataPath struct {
	CPU                  *int   `json:"cpu,omitempty"` // the CPU its thread was pinned to
	ZeroCopySends        int64  `json:"zerocopy_sends,omitempty"`
	ZeroCopyCompleted    int64  `json:"zerocopy_completed,omitempty"`
	ZeroCopyCopied       int64  `json:"zerocopy_copied,omitempty"`
	PacingBytesPerSecond uint64 `json:"pacing_bytes_per_s,omitempty"` // SO_MAX_PACING_RATE read back
	BusyPollMicros       int    `json:"busy_poll_us,omitempty"`       // SO_BUSY_POLL read back
	NAPIID               int    `json:"napi_id,omitempty"`
	Coalesced            int64  `json:"gro_coalesced,omitempty"`
}

// joinDataPath copies each side's data path record into the result,
// compares the paced rate with the achieved one, and turns what a side
// could not do into warnings.
func joinDataPath(res *Result, local, remote SideResult) {
	res.Local.DataPath, res.Remote.DataPath = local.DataPath, remote.DataPath
	t := res.Spec
	if t.DataPathOptions() == nil {
		return
	}
	for _, s := range []SideResult{local, remote} {
		dp := s.DataPath
		if dp == nil {
			if len(s.Flows) > 0 {
				res.Warnings = append(res.Warnings, Coded(WarnNoDataPathRecord,
					map[string]string{"side": string(s.Side), "options": strings.Join(t.DataPathOptions(), ", ")}, nil))
			}
			continue
		}
		if dp.ZeroCopyNote != "" {
			res.Warnings = append(res.Warnings, Coded(WarnZeroCopyRefused, map[string]string{"side": string(s.Side), "note": dp.ZeroCopyNote}, nil))
		}
		if p := dp.Pacing; p != nil {
			p.AchievedBitsPerSecond = fastestSent(res, s.Side)
			if p.HonouredBy == "" {
				res.Warnings = append(res.Warnings, Coded(WarnFQRateUnenforced, map[string]string{"side": string(s.Side), "note": p.Note}, nil))
			} else if p.AchievedBitsPerSecond > 1.1*p.AskedBitsPerSecond {
				res.Warnings = append(res.Warnings, Coded(WarnPacingCapExceeded, map[string]string{"side": string(s.Side)},
					map[string]float64{"achieved_bps": p.AchievedBitsPerSecond, "asked_bps": p.AskedBitsPerSecond}))
			}
		}
	}
}

// warnUDPBatch says when a UDP_STREAM sender made more sends per system
// call than the spec asks for (--send-batch): a side whose
// wirespeed predates --send-batch sent 64 per sendmmsg call whatever the
// spec said, which a result must not pass off as one call per datagram.
func warnUDPBatch(res *Result) {
	t := res.Spec
	if t.Kind != spec.UDPStream {
		return
	}
	for _, d := range res.Directions {
		for _, st := range d.Streams {
			s := st.Sender
			if s.Calls < 10 {
				continue // too few to tell, or a peer that does not count its calls (iperf3)
			}
			per := float64(s.Packets) / float64(s.Calls) / float64(t.GSOSegments())
			if per > float64(t.SendsPerCall())+0.5 {
				res.Warnings = append(res.Warnings, Coded(WarnUDPBatch, map[string]string{"side": string(d.Sender)},
					map[string]float64{"stream": float64(st.ID), "sends_per_call": per, "send_batch": float64(t.SendsPerCall())}))
			}
		}
	}
}

// fastestSent is the highest receiver-counted rate of a stream side sent.
func fastestSent(res *Result, side Side) float64 {
	var best float64
	for _, st := range res.Streams {
		if st.Sender.Side == side && st.Sender.Role == Sender {
			best = max(best, st.Summary.BitsPerSecond)
		}
	}
	return best
}

// AddCPUUtil fills the pinned CPUs' utilization from the side's CPU
// figures, which have every CPU's.
func (dp *DataPath) AddCPUUtil(c *measure.CPU) {
	if dp == nil || c == nil {
		return
	}
	for i := range dp.PinnedCPUs {
		for k, id := range c.PerCPUIDs {
			if id == dp.PinnedCPUs[i].CPU && k < len(c.PerCPUUtilPct) {
				u := c.PerCPUUtilPct[k]
				dp.PinnedCPUs[i].UtilPct = &u
			}
		}
	}
}
