package result

import (
	"math"
	"net/netip"

	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// Wire is what the device that carried a side's traffic counted over the
// side's window (netdev.Wire: the device's, its root qdisc's and its
// driver's offload counters), with the figures derived from them and
// from the test's own counts. Join fills it (joinWire).
type Wire struct {
	netdev.Wire
	// Packets per second each way, as the device counted them: a TSO or
	// GSO packet handed to the device is one packet, however many
	// segments it becomes on a physical wire.
	TxPacketsPerSecond float64 `json:"tx_pps"`
	RxPacketsPerSecond float64 `json:"rx_pps"`
	// Mean bytes per packet each way, headers included: what TSO or GSO
	// built on a sender, what GRO rebuilt on a receiver (several MSS per
	// packet), or one segment (MSS plus headers) without them.
	TxBytesPerPacket float64 `json:"tx_bytes_per_packet,omitempty"`
	RxBytesPerPacket float64 `json:"rx_bytes_per_packet,omitempty"`
	// Frames per second each way and their mean bytes, headers
	// included: what a physical wire carries, one frame per segment of
	// at most SegmentBytes of payload, where the device's packets above
	// were the stack's super-packets. Tx's come from the root qdisc's
	// count where it has one (TxFramesFrom "qdisc": the kernel counts a
	// GSO packet in a qdisc as the segments it becomes, and a tbf
	// segments one larger than its bucket), else, as rx's always, from
	// the device's bytes over SegmentBytes plus HeaderBytes per frame
	// (framesOf; "estimate"). None on loopback, which has no wire.
	TxFramesPerSecond float64 `json:"tx_frames_per_s,omitempty"`
	RxFramesPerSecond float64 `json:"rx_frames_per_s,omitempty"`
	TxBytesPerFrame   float64 `json:"tx_bytes_per_frame,omitempty"`
	RxBytesPerFrame   float64 `json:"rx_bytes_per_frame,omitempty"`
	TxFramesFrom      string  `json:"tx_frames_from,omitempty"`
	// SegmentBytes is the payload of a full frame the estimate takes:
	// the largest MSS of the side's TCP streams (TCP_INFO's snd_mss),
	// or a UDP test's datagram size.
	SegmentBytes int `json:"segment_bytes,omitempty"`
	// The device's rate each way, headers included, against the payload
	// the test moved that way (its goodput) over the same window: on a
	// TCP stream's sender the bytes its peer acknowledged, on its
	// receiver the bytes its kernel received (GoodputLeft; the program's
	// own counts where the kernel has none, and for UDP and the
	// request/response tests).
	TxBitsPerSecond        float64 `json:"tx_wire_bps"`
	RxBitsPerSecond        float64 `json:"rx_wire_bps"`
	TxGoodputBitsPerSecond float64 `json:"tx_goodput_bps"`
	RxGoodputBitsPerSecond float64 `json:"rx_goodput_bps"`
	// GoodputLeft says the goodput counts what left and arrived (TCP's
	// acknowledged and received bytes), not what the program wrote.
	GoodputLeft bool `json:"goodput_left,omitempty"`
	// OtherPct is the share of the device's bytes that were not this
	// test's: the device's bytes less the test's payload and the headers
	// of the device's packets (HeaderBytes each), in percent, never below
	// 0. Other traffic on the device in the window shows here.
	OtherPct float64 `json:"other_pct"`
	// HeaderBytes is the headers counted for each packet the device saw:
	// Ethernet, IP and TCP (with timestamps) or UDP.
	HeaderBytes int `json:"header_bytes"`
}

// Thresholds of the wire warnings.
const (
	// WireOtherPct: a device carrying more than this share of other
	// traffic makes its figures (and perhaps the result) not the test's.
	WireOtherPct = 50
	// FragmentsPerDatagram: a UDP sender's device sending this many
	// packets per datagram or more was sending fragments.
	FragmentsPerDatagram = 1.5
)

// headerBytes is the headers of one packet of t's traffic: Ethernet (the
// loopback device has one too), IPv4 or IPv6, and TCP with the
// timestamps option (20 + 12) or UDP.
func headerBytes(t spec.Test, ipv6 bool) int {
	h := 14 + 20
	if ipv6 {
		h = 14 + 40
	}
	if t.Kind.UDP() {
		return h + 8
	}
	return h + 32
}

// ipv6Of reports whether env's route to the peer is IPv6.
func ipv6Of(env *sysinfo.Env) bool {
	if env == nil {
		return false
	}
	a, err := netip.ParseAddr(env.Peer)
	return err == nil && a.Unmap().Is6()
}

// payloadOf is the payload bytes a side sent and received in its
// windows: a TCP stream's bytes its peer acknowledged and its kernel
// received where the kernel counted them (left), else what the program
// wrote and read.
func payloadOf(t spec.Test, s SideResult) (tx, rx int64, left bool) {
	for _, f := range s.Flows {
		switch f.Role {
		case Sender, Receiver:
			for _, st := range f.Streams {
				n, k := st.Bytes, st.AckedBytes
				if f.Role == Receiver {
					k = st.ReceivedBytes
				}
				if k != nil {
					n, left = *k, true
				}
				if f.Role == Sender {
					tx += n
				} else {
					rx += n
				}
			}
		case Requester, Responder:
			var n int64
			for _, st := range f.Streams {
				n += st.Packets
			}
			req, resp := n*int64(t.RequestSize), n*int64(t.ResponseSize)
			if f.Role == Responder {
				req, resp = resp, req
			}
			tx += req
			rx += resp
		}
	}
	return tx, rx, left
}

// segmentOf is the payload of a full frame of t's traffic on side s:
// the largest MSS of its TCP streams, a UDP test's datagram size; 0
// when neither is known.
func segmentOf(t spec.Test, s SideResult) int {
	if t.Kind.UDP() {
		return t.SendSize
	}
	mss := 0
	for _, f := range s.Flows {
		for _, st := range f.Streams {
			if st.TCPInfo != nil {
				mss = max(mss, st.TCPInfo.SndMSS)
			}
		}
	}
	return mss
}

// framesOf estimates the frames a physical wire carries for a device's
// packets and bytes (headers included, header bytes each): the payload
// (bytes less a header per packet) over segment, rounded up, and never
// fewer than the packets. A super-packet's last segment is short, so
// the estimate is low by at most one frame per packet; bytes is the
// packets' and a header for each frame they became.
func framesOf(packets, bytes uint64, header, segment int) (frames, frameBytes float64) {
	frames, frameBytes = float64(packets), float64(bytes)
	if segment <= 0 || packets == 0 {
		return frames, frameBytes
	}
	payload := float64(bytes) - float64(packets)*float64(header)
	if n := math.Ceil(payload / float64(segment)); n > frames {
		frameBytes += (n - frames) * float64(header)
		frames = n
	}
	return frames, frameBytes
}

// qdiscFrames reports whether the root qdisc's count stands for the
// frames the device sent: a qdisc that sends (not noqueue) and sent
// about as many packets as the device did or more (2% less for the
// moment between the two readings); one that some traffic bypassed
// does not.
func qdiscFrames(w netdev.Wire) bool {
	q := w.Qdisc
	return q != nil && q.Kind != "noqueue" && q.SentPackets > 0 && 100*q.SentPackets >= 98*w.Link.TxPackets
}

// wireOf derives a side's wire figures from its device counters.
func wireOf(t spec.Test, s SideResult) *Wire {
	if s.Wire == nil {
		return nil
	}
	w := &Wire{Wire: *s.Wire, HeaderBytes: headerBytes(t, ipv6Of(s.Env))}
	l, dt := w.Link, w.ElapsedS
	per := func(n uint64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(n) / dt
	}
	w.TxPacketsPerSecond, w.RxPacketsPerSecond = per(l.TxPackets), per(l.RxPackets)
	w.TxBitsPerSecond, w.RxBitsPerSecond = 8*per(l.TxBytes), 8*per(l.RxBytes)
	if l.TxPackets > 0 {
		w.TxBytesPerPacket = float64(l.TxBytes) / float64(l.TxPackets)
	}
	if l.RxPackets > 0 {
		w.RxBytesPerPacket = float64(l.RxBytes) / float64(l.RxPackets)
	}
	tx, rx, left := payloadOf(t, s)
	w.TxGoodputBitsPerSecond, w.RxGoodputBitsPerSecond = 8*per(uint64(max(tx, 0))), 8*per(uint64(max(rx, 0)))
	w.GoodputLeft = left
	if !w.Loopback {
		w.SegmentBytes = segmentOf(t, s)
		var txf, txb float64
		if qdiscFrames(w.Wire) {
			txf, txb, w.TxFramesFrom = float64(w.Qdisc.SentPackets), float64(w.Qdisc.SentBytes), "qdisc"
		} else {
			txf, txb = framesOf(l.TxPackets, l.TxBytes, w.HeaderBytes, w.SegmentBytes)
			w.TxFramesFrom = "estimate"
		}
		rxf, rxb := framesOf(l.RxPackets, l.RxBytes, w.HeaderBytes, w.SegmentBytes)
		w.TxFramesPerSecond, w.RxFramesPerSecond = per(uint64(txf)), per(uint64(rxf))
		if txf > 0 {
			w.TxBytesPerFrame = txb / txf
		}
		if rxf > 0 {
			w.RxBytesPerFrame = rxb / rxf
		}
	}
	// On loopback every packet the test sent either way went out (and
	// in) once: count its bytes once, against both ways' payload.
	devBytes, devPkts, payload := l.TxBytes+l.RxBytes, l.TxPackets+l.RxPackets, tx+rx
	if w.Loopback {
		devBytes, devPkts = l.TxBytes, l.TxPackets
	}
	if devBytes > 0 {
		test := float64(payload) + float64(devPkts)*float64(w.HeaderBytes)
		w.OtherPct = max(0, 100*(float64(devBytes)-test)/float64(devBytes))
	}
	return w
}

// joinWire fills each side's wire figures, the summary's figures of the
// sender's device, and the warnings the device counters make possible.
func joinWire(res *Result, local, remote SideResult) {
	t := res.Spec
	res.Local.Wire = wireOf(t, local)
	res.Remote.Wire = wireOf(t, remote)
	// The sender's device: the client's, unless the server sends alone.
	snd := res.Local.Wire
	if t.Kind == spec.TCPMaerts || t.Reverse && t.Kind == spec.UDPStream {
		snd = res.Remote.Wire
	}
	if snd != nil && snd.ElapsedS > 0 {
		res.Summary.SenderWirePacketsPerSecond = snd.TxPacketsPerSecond
		res.Summary.SenderWireBytesPerPacket = snd.TxBytesPerPacket
		res.Summary.SenderWireFramesPerSecond = snd.TxFramesPerSecond
		res.Summary.SenderWireBytesPerFrame = snd.TxBytesPerFrame
	}
	for _, s := range []struct {
		side Side
		w    *Wire
		env  *sysinfo.Env
	}{{Local, res.Local.Wire, local.Env}, {Remote, res.Remote.Wire, remote.Env}} {
		w := s.w
		if w == nil || w.Loopback {
			// lo is the whole host's talk to itself: its drops and its
			// other traffic are no more this test's than the host's CPU
			// load is (the CPU figures say that); the wire line shows
			// the share.
			continue
		}
		l := w.Link
		if drops := l.RxDropped + l.RxMissed + l.RxOverErrs; drops > 0 {
			res.Warnings = append(res.Warnings, Coded(WarnDeviceRxDrops,
				map[string]string{"side": string(s.side), "device": w.Device},
				map[string]float64{"dropped_packets": float64(drops), "rx_dropped": float64(l.RxDropped), "rx_missed": float64(l.RxMissed), "rx_over_errors": float64(l.RxOverErrs)}))
		}
		if w.OtherPct > WireOtherPct {
			res.Warnings = append(res.Warnings, Coded(WarnDeviceOther,
				map[string]string{"side": string(s.side), "device": w.Device}, map[string]float64{"other_pct": w.OtherPct}))
		}
	}
	if t.Kind == spec.UDPStream {
		for _, d := range res.Directions {
			w, sr := res.Local.Wire, local
			if d.Sender == Remote {
				w, sr = res.Remote.Wire, remote
			}
			if fw, ok := fragmentWarning(t, d, w, sr.Env); ok {
				res.Warnings = append(res.Warnings, fw)
			}
		}
	}
}

// fragmentWarning says when a UDP_STREAM direction's datagrams were
// larger than the path MTU: its sender's device sent more packets than
// the sender sent datagrams (fragments), or, without device counters,
// the datagram and its headers exceed the device's MTU.
func fragmentWarning(t spec.Test, d DirectionResult, w *Wire, env *sysinfo.Env) (Warning, bool) {
	var dgrams int64
	for _, st := range d.Streams {
		dgrams += st.Sender.Packets
	}
	mtu := 0
	if env != nil && env.Interface != nil {
		mtu = env.Interface.MTU
	}
	ip := 20
	if ipv6Of(env) {
		ip = 40
	}
	size := t.SendSize + 8 + ip
	fig := map[string]float64{"datagram_bytes": float64(t.SendSize), "mtu": float64(mtu)}
	if mtu > 0 {
		// The largest -m that fits: the suggestion.
		fig["max_datagram_bytes"] = float64(mtu - 8 - ip)
	}
	names := map[string]string{"direction": string(d.Direction)}
	if w != nil && dgrams > 0 && !w.Loopback {
		per := float64(w.Link.TxPackets) / float64(dgrams)
		if per < FragmentsPerDatagram {
			return Warning{}, false
		}
		names["device"] = w.Device
		fig["packets_per_datagram"], fig["packets"], fig["datagrams"] = per, float64(w.Link.TxPackets), float64(dgrams)
		return Coded(WarnUDPFragmented, names, fig), true
	}
	if w == nil && mtu > 0 && size > mtu {
		fig["packet_bytes"] = float64(size)
		return Coded(WarnUDPOverMTU, names, fig), true
	}
	return Warning{}, false
}
