package result

import (
	"fmt"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
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
func udpWarnings(t spec.Test, d DirectionResult, haveRcv bool, snd, rcv *measure.Counters) []string {
	var w []string
	s := d.Summary
	if t.RateBitsPerSecond > 0 && s.SenderElapsedS > 0 {
		want := t.RateBitsPerSecond * float64(max(t.Parallel, 1))
		if s.SenderBitsPerSecond < want*ShortfallPct/100 {
			w = append(w, fmt.Sprintf("%s: the sender reached %s asked (%.1f%%): the %s side was held back by its CPU, its socket buffer or the link it sends on",
				d.Direction, units.FormatBitsOf(s.SenderBitsPerSecond, want), 100*s.SenderBitsPerSecond/want, d.Sender))
		}
	}
	if haveRcv && s.SenderBitsPerSecond > 0 && s.SenderBitsPerSecond > s.BitsPerSecond*(1+BeyondSenderPct/100.0) {
		// Datagrams the sender's kernel took and then dropped at a full
		// queue of its own host count as sent: SndbufErrors beyond the
		// refusals the sender saw (docs/results.md).
		where := "on the path or at the receiver"
		if snd != nil && s.UDPSummary != nil {
			if local := snd.UDP.SndbufErrors - s.UDPSummary.SendErrors; local > 0 {
				where = fmt.Sprintf("%d of them dropped by the sender's kernel at a full queue of its own host (Udp SndbufErrors beyond the refusals), the rest on the path or at the receiver", local)
			}
		}
		w = append(w, fmt.Sprintf("%s: the receiver got %s sent (%.4g%%): datagrams were lost after the sender's (%s) socket took them, %s (see the kernel lines, -v); the receiver is %s",
			d.Direction, units.FormatBitsOf(s.BitsPerSecond, s.SenderBitsPerSecond), 100*s.BitsPerSecond/s.SenderBitsPerSecond, d.Sender, where, d.Receiver))
	}
	var sip, rip measure.IPCounters
	if snd != nil {
		sip = snd.IP
	}
	if rcv != nil {
		rip = rcv.IP
	}
	if sip.FragCreates > 0 || sip.FragFails > 0 || rip.ReasmFails > 0 || rip.ReasmTimeout > 0 {
		w = append(w, fmt.Sprintf("%s: IPv4 fragmentation: datagrams of %d bytes are larger than the path MTU, and one lost fragment loses the whole datagram; use a smaller -m: the sender's kernel (%s) cut datagrams into %d fragments (Ip FragCreates) and could not cut %d (FragFails); the receiver's (%s) reassembled %d (ReasmOKs) and gave up on %d (ReasmFails, %d of them timed out)",
			d.Direction, t.SendSize, d.Sender, sip.FragCreates, sip.FragFails, d.Receiver, rip.ReasmOKs, rip.ReasmFails, rip.ReasmTimeout))
	}
	return w
}
