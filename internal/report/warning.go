package report

import (
	"fmt"
	"strings"
	"time"

	"wirespeed/internal/record"
	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// The words of a result's warnings and of its limit's notes: result and
// limit say them as a code and figures (result.Warning); this file alone
// turns them into words. Each code's words are clauses, the first saying
// what happened and the rest why or what to do: the long form is all of
// them, and a line too long for the default text keeps the first clauses
// that fit (fitWarning, fit.go), so the short form is chosen, not cut out
// of a sentence. docs/results.md lists every code with its names and
// figures.

func init() {
	// The JSON carries each warning's words beside its code and figures.
	result.SetRenderer(WarningText)
}

// WarningText is a warning's words in full: its code's, or for a warning
// without a code (a peer's words, a document from before codes) its Text.
func WarningText(w result.Warning) string { return strings.Join(warningClauses(w), "") }

// WarningTexts are the words of ws, each in full.
func WarningTexts(ws []result.Warning) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, WarningText(w))
	}
	return out
}

// warningClauses are a warning's words as clauses, each with the
// punctuation that leads it: joined they are WarningText.
func warningClauses(w result.Warning) []string {
	if f, ok := warningWords[w.Code]; ok && w.Code != "" {
		return f(w)
	}
	return []string{w.Text}
}

// warningWords gives each code its clauses.
var warningWords = map[result.WarningCode]func(result.Warning) []string{
	result.WarnNoSenderFigures: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%s: no sender figures from the %s side", w.Name("direction"), w.Name("side"))}
	},
	result.WarnNoReceiverFigures: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%s: no receiver figures from the %s side", w.Name("direction"), w.Name("side"))}
	},
	result.WarnSideError: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: " + w.Name("message")}
	},
	result.WarnSideWarning: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: " + w.Name("message")}
	},
	result.WarnChecksumErrors: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("%s side: the kernel counted %d segments or datagrams with a bad checksum", w.Name("side"), count(w, "in_csum_errors")),
			" (InCsumErrors) during the run",
			": a NIC computing wrong checksums, often with offload and jumbo frames, shows up this way",
		}
	},
	result.WarnAmountNoSender: func(w result.Warning) []string {
		return []string{amountHead(w), fmt.Sprintf(": the receiver got %d bytes (no sender figures)", count(w, "received_bytes"))}
	},
	result.WarnAmountLengthOut: func(w result.Warning) []string {
		length := time.Duration(w.Figure("length_s") * float64(time.Second)).Round(time.Microsecond)
		return []string{amountHead(w), fmt.Sprintf(": the sender sent %d bytes before the length (-l %v) ran out", count(w, "sent_bytes"), length)}
	},
	result.WarnAmountLost: func(w result.Warning) []string {
		return []string{amountHead(w), fmt.Sprintf(": the sender sent %d bytes, the receiver got %d", count(w, "sent_bytes"), count(w, "received_bytes"))}
	},
	result.WarnNoCPUFigures: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: no CPU figures", ": " + w.Name("reason")}
	},
	result.WarnNoDataPathRecord: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: no data path record",
			fmt.Sprintf(": its wirespeed may predate %s and have measured without them", w.Name("options"))}
	},
	result.WarnMPTCPFallback: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%s side: %d of %d streams fell back to TCP", w.Name("side"), count(w, "streams"), count(w, "of")),
			": the peer or a middlebox between refused Multipath TCP (--mptcp)"}
	},
	result.WarnNoMPTCPRecord: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: no MPTCP record",
			": its wirespeed may predate --mptcp and have used TCP"}
	},
	result.WarnZeroCopyRefused: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: " + w.Name("note")}
	},
	result.WarnFQRateUnenforced: func(w result.Warning) []string {
		return []string{w.Name("side") + " side: --fq-rate is not enforced", ": " + w.Name("note")}
	},
	result.WarnPacingCapExceeded: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%s side: a stream reached %s against a pacing cap of %s", w.Name("side"),
			units.FormatBits(w.Figure("achieved_bps")), units.FormatBits(w.Figure("asked_bps"))), ": the cap did not hold"}
	},
	result.WarnUDPBatch: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("%s side: stream %d made %.1f sends per system call where the spec asks for %d", w.Name("side"),
				count(w, "stream"), w.Figure("sends_per_call"), count(w, "send_batch")),
			" (--send-batch)",
			": its wirespeed may predate the option and batch by default",
		}
	},
	result.WarnUDPSenderShort: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("%s: the sender reached %s asked", w.Name("direction"), units.FormatBitsOf(w.Figure("sender_bps"), w.Figure("asked_bps"))),
			fmt.Sprintf(" (%.1f%%)", w.Figure("sender_pct")),
			fmt.Sprintf(": the %s side was held back by its CPU, its socket buffer or the link it sends on", w.Name("sender")),
		}
	},
	result.WarnUDPLostAfterSend: func(w result.Warning) []string {
		where := "on the path or at the receiver"
		if n := count(w, "sender_kernel_dropped_datagrams"); n > 0 {
			where = fmt.Sprintf("%d of them dropped by the sender's kernel at a full queue of its own host (Udp SndbufErrors beyond the refusals), the rest on the path or at the receiver", n)
		}
		return []string{
			fmt.Sprintf("%s: the receiver got %s sent", w.Name("direction"), units.FormatBitsOf(w.Figure("received_bps"), w.Figure("sent_bps"))),
			fmt.Sprintf(" (%.4g%%)", w.Figure("received_pct")),
			fmt.Sprintf(": datagrams were lost after the sender's (%s) socket took them, %s (see the kernel lines, -v)", w.Name("sender"), where),
			"; the receiver is " + w.Name("receiver"),
		}
	},
	result.WarnIPv4Fragmentation: func(w result.Warning) []string {
		return []string{
			w.Name("direction") + ": IPv4 fragmentation",
			fmt.Sprintf(": datagrams of %d bytes are larger than the path MTU, and one lost fragment loses the whole datagram", count(w, "datagram_bytes")),
			"; use a smaller -m",
			fmt.Sprintf(": the sender's kernel (%s) cut datagrams into %d fragments (Ip FragCreates) and could not cut %d (FragFails)",
				w.Name("sender"), count(w, "frag_creates"), count(w, "frag_fails")),
			fmt.Sprintf("; the receiver's (%s) reassembled %d (ReasmOKs) and gave up on %d (ReasmFails, %d of them timed out)",
				w.Name("receiver"), count(w, "reasm_oks"), count(w, "reasm_fails"), count(w, "reasm_timeout")),
		}
	},
	result.WarnDeviceRxDrops: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("%s side: its device %s dropped %d received packets during the run", w.Name("side"), w.Name("device"), count(w, "dropped_packets")),
			fmt.Sprintf(" (rx_dropped %d, rx_missed %d, rx_over_errors %d)", count(w, "rx_dropped"), count(w, "rx_missed"), count(w, "rx_over_errors")),
			": its receive ring or the kernel's backlog was full",
			"; see docs/limits.md",
		}
	},
	result.WarnDeviceOther: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("%s side: %.0f%% of what its device %s carried was not this test's traffic", w.Name("side"), w.Figure("other_pct"), w.Name("device")),
			": the device figures are mostly other traffic's",
			", and the result may be held back by it",
		}
	},
	result.WarnUDPFragmented: func(w result.Warning) []string {
		return append([]string{
			fmt.Sprintf("%s: UDP datagrams of %d bytes are larger than the path MTU", w.Name("direction"), count(w, "datagram_bytes")),
			fmt.Sprintf(": the sender's device %s (MTU %d) sent %.2f packets per datagram", w.Name("device"), count(w, "mtu"), w.Figure("packets_per_datagram")),
			fmt.Sprintf(" (%d packets for %d datagrams)", count(w, "packets"), count(w, "datagrams")),
			", so each went as fragments and one lost fragment loses the whole datagram",
		}, suggestSize(w)...)
	},
	result.WarnUDPOverMTU: func(w result.Warning) []string {
		return append([]string{
			fmt.Sprintf("%s: UDP datagrams of %d bytes (%d with their IP and UDP headers) are larger than the sender's device MTU %d",
				w.Name("direction"), count(w, "datagram_bytes"), count(w, "packet_bytes"), count(w, "mtu")),
			": they leave as fragments, and one lost fragment loses the whole datagram",
		}, suggestSize(w)...)
	},

	result.NoteNoDirection:    words("no direction was measured"),
	result.NoteBothDirections: words("both directions"),
	result.NoteDirectionsDiffer: func(w result.Warning) []string {
		return []string{"the directions differ",
			fmt.Sprintf(": %s %s, %s %s", w.Name("first_direction"), kindSide(w.Name("first_kind"), w.Name("first_side")),
				w.Name("second_direction"), kindSide(w.Name("second_kind"), w.Name("second_side"))),
			"; see each direction"}
	},
	result.NoteOthersBusy: func(w result.Warning) []string {
		cs := []string{fmt.Sprintf("other processes on the %s host used %.0f%% of a CPU", w.Name("side"), w.Figure("util_pct"))}
		if len(w.Processes) > 0 {
			var ts []string
			for _, t := range w.Processes {
				ts = append(ts, fmt.Sprintf("%s, pid %d, %.0f%% (cpu%d)", t.Name, t.ID, t.UtilPct, t.LastCPU))
			}
			cs = append(cs, " (busiest: "+strings.Join(ts, "; ")+")")
		}
		return cs
	},
	result.NoteNothingReceived: words("nothing was received in the window"),
	result.NoteRateNotInForce: func(w result.Warning) []string {
		return []string{fmt.Sprintf("the goodput is %.0f%% of the %s's %.4g bit/s", w.Figure("goodput_pct"), rateName(w), w.Figure("rate_bps")),
			": that rate was not in force"}
	},
	result.NoteReceiverCPUAlso: func(w result.Warning) []string {
		return []string{"the receiver's CPU was also near saturation",
			fmt.Sprintf(" (%.0f%%: its busiest thread's time, wait and the softirq of its CPU)", w.Figure("load_pct"))}
	},
	result.NoteSoftIRQSaturated: words("the receiver's busiest CPU was saturated by softirq and irq"),
	result.NoteRwndWithoutCPU: func(w result.Warning) []string {
		return []string{fmt.Sprintf("rwnd_limited %.0f%% of the window", w.Figure("rwnd_limited_pct")),
			", but without the receiver's CPU figures a small window and a slow receiver look alike",
			" (" + cpuMissingText(w) + ")"}
	},
	result.NoteUDPLoss: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%.1f%% of the datagrams were lost", w.Figure(record.Loss.Name)), " with no rate reached and no CPU saturated"}
	},
	result.NoteReceiverDeviceFull: func(w result.Warning) []string {
		return []string{
			fmt.Sprintf("the receiver's device %s dropped %.2f%% of the packets it received", w.Name("device"), w.Figure("drop_pct")),
			" (rx_dropped, rx_missed, rx_over_errors)",
			": its ring or the kernel's backlog overflowed",
		}
	},
	result.NoteNoCPUToTell: func(w result.Warning) []string {
		return []string{"no CPU figures from both sides to tell a CPU limit", " (" + cpuMissingText(w) + ")"}
	},
	result.NoteNoCPUSaturated: func(w result.Warning) []string {
		return []string{"no CPU saturated",
			fmt.Sprintf(": the sender's busiest thread used %.0f%%, the receiver's %.0f%%", w.Figure("sender_load_pct"), w.Figure("receiver_load_pct"))}
	},
	result.NoteNoRateKnown: func(result.Warning) []string {
		return []string{"no rate known on the route", " (no shaping qdisc, no physical interface speed)"}
	},
	result.NoteNoTransaction: words("no transaction completed in the window"),
	result.NoteBusyPolling: func(w result.Warning) []string {
		return []string{fmt.Sprintf("busy polling (%d µs) keeps a CPU busy by design", count(w, "busy_poll_us"))}
	},
	result.NoteNoCPUToTellLatency: func(w result.Warning) []string {
		return []string{"no CPU figures from both sides to tell a CPU limit from the latency", " (" + cpuMissingText(w) + ")"}
	},
	result.NoteIterationsOf: func(w result.Warning) []string {
		return []string{fmt.Sprintf("%d of %d iterations", count(w, "iterations_with"), count(w, "iterations"))}
	},
	result.NoteSenderDevicePackets: func(w result.Warning) []string {
		return []string{fmt.Sprintf("its device %s sent %.0f packets/s of %.0f bytes", w.Name("device"), w.Figure("packets_per_s"), w.Figure("bytes_per_packet")),
			": the cost is per packet, and TSO/GSO or a larger MTU make fewer, larger ones"}
	},
	result.NoteReceiverDevicePacket: func(w result.Warning) []string {
		return []string{fmt.Sprintf("its device %s received %.0f packets/s of %.0f bytes", w.Name("device"), w.Figure("packets_per_s"), w.Figure("bytes_per_packet")),
			": the cost is per packet, and GRO or a larger MTU make fewer, larger ones"}
	},
	result.NoteReceiverDeviceDrops: func(w result.Warning) []string {
		return []string{fmt.Sprintf("the receiver's device %s dropped %.2f%% of the packets it received", w.Name("device"), w.Figure("drop_pct"))}
	},
	result.NoteWindowAlsoFull: func(w result.Warning) []string {
		if f := w.Figure("in_flight_pct"); f > 0 {
			return []string{fmt.Sprintf("the receive window set by the buffer asked for held the rate too: what was in flight (goodput x RTT) filled %.0f%% of its %s",
				f, units.FormatBytes(w.Figure("rcvbuf_bytes"))),
				fmt.Sprintf(", and it was full %.0f%% of the window (rwnd_limited)", w.Figure("rwnd_limited_pct"))}
		}
		return []string{fmt.Sprintf("the receive window set by the buffer asked for was also full %.0f%% of the window", w.Figure("rwnd_limited_pct")),
			" (rwnd_limited)"}
	},
}

// words is the clauses of a code whose words quote nothing.
func words(s string) func(result.Warning) []string {
	return func(result.Warning) []string { return []string{s} }
}

// count is a figure that counts something, as an integer.
func count(w result.Warning, f string) int64 { return int64(w.Figure(f)) }

func amountHead(w result.Warning) string {
	return fmt.Sprintf("%s: the amount of %d bytes was not reached", w.Name("direction"), count(w, "amount_bytes"))
}

// suggestSize is the -m that fits the MTU, when the MTU is known.
func suggestSize(w result.Warning) []string {
	if count(w, "mtu") <= 0 {
		return nil
	}
	return []string{fmt.Sprintf("; use -m %d or less", count(w, "max_datagram_bytes"))}
}

func kindSide(kind, side string) string {
	if side != "" {
		return fmt.Sprintf("%s (%s)", kind, side)
	}
	return kind
}

// rateName names the rate of a rate_not_in_force note.
func rateName(w result.Warning) string {
	switch w.Name("source") {
	case "rate":
		return "-b cap"
	case "fq_rate":
		return "--fq-rate cap"
	case "qdisc":
		return w.Name("qdisc") + " qdisc on " + w.Name("interface")
	}
	return w.Name("interface") + " interface speed"
}

// cpuMissingText says what to do about CPU figures missing from the
// sides a note names: run with --cpu when the test did not ask for them;
// when it did, which side sent none.
func cpuMissingText(w result.Warning) string {
	sides := w.Name("missing_sides")
	if sides == "" {
		return "run with --cpu"
	}
	return "--cpu was on; none from the " + sides + " side: an iperf3 server or an older peer sends none, or the side could not read its CPU"
}
