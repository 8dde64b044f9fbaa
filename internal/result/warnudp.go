package result

import (
	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// Thresholds of the UDP_STREAM shortfall warnings.
const (
	// ShortfallPct: a paced sender below this share of -b (times the
	// streams) did not reach the rate it was asked for.
	ShortfallPct = 95
	// BeyondSenderPct: a sender's rate more than this much above the
	// receiver's lost datagrams after they left the sender's socket.
	BeyondSenderPct = 10
)

// udpWarnings says what the figures of a UDP_STREAM direction d do not
// show at a glance: a sender short of the rate asked for, datagrams lost
// after the sender's socket took them (and how many of those its own
// kernel dropped), and IPv4 fragmentation on either host. snd and
// rcv are the kernel counters of the sending and receiving hosts, nil when
// that side had none; haveRcv says whether the receiver sent figures.
func udpWarnings(t spec.Test, d DirectionResult, haveRcv bool, snd, rcv *measure.Counters) []Warning {
	var w []Warning
	s := d.Summary
	if t.RateBitsPerSecond > 0 && s.SenderElapsedS > 0 {
		want := t.RateBitsPerSecond * float64(max(t.Parallel, 1))
		if s.SenderBitsPerSecond < want*ShortfallPct/100 {
			w = append(w, Coded(WarnUDPSenderShort,
				map[string]string{"direction": string(d.Direction), "sender": string(d.Sender)},
				map[string]float64{"sender_bps": s.SenderBitsPerSecond, "asked_bps": want, "sender_pct": 100 * s.SenderBitsPerSecond / want}))
		}
	}
	if haveRcv && s.SenderBitsPerSecond > 0 && s.SenderBitsPerSecond > s.BitsPerSecond*(1+BeyondSenderPct/100.0) {
		// Datagrams the sender's kernel took and then dropped at a full
		// queue of its own host count as sent: SndbufErrors beyond the
		// refusals the sender saw (docs/results.md).
		var local int64
		if snd != nil && s.UDPSummary != nil {
			local = max(snd.UDP.SndbufErrors-s.UDPSummary.SendErrors, 0)
		}
		w = append(w, Coded(WarnUDPLostAfterSend,
			map[string]string{"direction": string(d.Direction), "sender": string(d.Sender), "receiver": string(d.Receiver)},
			map[string]float64{"received_bps": s.BitsPerSecond, "sent_bps": s.SenderBitsPerSecond, "received_pct": 100 * s.BitsPerSecond / s.SenderBitsPerSecond,
				"sender_kernel_dropped_datagrams": float64(local)}))
	}
	var sip, rip measure.IPCounters
	if snd != nil {
		sip = snd.IP
	}
	if rcv != nil {
		rip = rcv.IP
	}
	if sip.FragCreates > 0 || sip.FragFails > 0 || rip.ReasmFails > 0 || rip.ReasmTimeout > 0 {
		w = append(w, Coded(WarnIPv4Fragmentation,
			map[string]string{"direction": string(d.Direction), "sender": string(d.Sender), "receiver": string(d.Receiver)},
			map[string]float64{"datagram_bytes": float64(t.SendSize), "frag_creates": float64(sip.FragCreates), "frag_fails": float64(sip.FragFails),
				"reasm_oks": float64(rip.ReasmOKs), "reasm_fails": float64(rip.ReasmFails), "reasm_timeout": float64(rip.ReasmTimeout)}))
	}
	return w
}
