package result

import (
	"encoding/json"
	"maps"
	"math"
	"sync/atomic"

	"wirespeed/internal/measure"
)

// Warning is a caveat of a result, or a note of its limit: a code saying
// which it is and the figures it quotes. Package report alone turns it into
// words (report.WarningText); docs/results.md lists every code with its
// figures. A warning without a code is words alone: what a peer or another
// package said (an error, a side's own warning), and every warning of a
// document written before warnings had codes.
//
// In the JSON a coded warning is an object: "code", "names", "figures",
// "processes" and "text", the words report gives it (MarshalJSON); one of
// words alone is a string, as every warning of a document written before
// codes is, and decodes as one.
type Warning struct {
	Code WarningCode `json:"code,omitempty"`
	// Names are the words the warning quotes that are not numbers: the
	// side, the direction, a device, a peer's message.
	Names map[string]string `json:"names,omitempty"`
	// Figures are the numbers it quotes, each named with its unit.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Processes are the processes it names, busiest first.
	Processes []measure.TaskCPU `json:"processes,omitempty"`
	// Text is the words: those of a warning without a code, and in the
	// JSON those report gives a coded one.
	Text string `json:"text"`
}

// WarningCode names what a Warning says; docs/results.md lists them.
type WarningCode string

// The codes of a result's warnings (Result.Warnings): the names and the
// figures each carries are in docs/results.md.
const (
	WarnNoSenderFigures   WarningCode = "no_sender_figures"
	WarnNoReceiverFigures WarningCode = "no_receiver_figures"
	WarnSideError         WarningCode = "side_error"
	WarnSideWarning       WarningCode = "side_warning"
	WarnChecksumErrors    WarningCode = "checksum_errors"
	WarnAmountNoSender    WarningCode = "amount_no_sender"
	WarnAmountLengthOut   WarningCode = "amount_length_ran_out"
	WarnAmountLost        WarningCode = "amount_lost"
	WarnNoCPUFigures      WarningCode = "no_cpu_figures"
	WarnNoDataPathRecord  WarningCode = "no_datapath_record"
	WarnZeroCopyRefused   WarningCode = "zerocopy_refused"
	WarnFQRateUnenforced  WarningCode = "fq_rate_not_enforced"
	WarnPacingCapExceeded WarningCode = "pacing_cap_exceeded"
	WarnUDPBatch          WarningCode = "udp_batch"
	WarnUDPSenderShort    WarningCode = "udp_sender_short"
	WarnUDPLostAfterSend  WarningCode = "udp_lost_after_send"
	WarnIPv4Fragmentation WarningCode = "ipv4_fragmentation"
	WarnDeviceRxDrops     WarningCode = "device_rx_drops"
	WarnDeviceOther       WarningCode = "device_other_traffic"
	WarnUDPFragmented     WarningCode = "udp_fragmented"
	WarnUDPOverMTU        WarningCode = "udp_over_mtu"
	WarnMPTCPFallback     WarningCode = "mptcp_fallback"
	WarnNoMPTCPRecord     WarningCode = "no_mptcp_record"
)

// The codes of a limit's notes (Limit.Notes), set by package limit.
const (
	NoteNoDirection          WarningCode = "no_direction"
	NoteBothDirections       WarningCode = "both_directions"
	NoteDirectionsDiffer     WarningCode = "directions_differ"
	NoteOthersBusy           WarningCode = "others_busy"
	NoteNothingReceived      WarningCode = "nothing_received"
	NoteRateNotInForce       WarningCode = "rate_not_in_force"
	NoteReceiverCPUAlso      WarningCode = "receiver_cpu_also"
	NoteSoftIRQSaturated     WarningCode = "softirq_saturated"
	NoteRwndWithoutCPU       WarningCode = "rwnd_without_receiver_cpu"
	NoteUDPLoss              WarningCode = "udp_loss_unexplained"
	NoteReceiverDeviceFull   WarningCode = "receiver_device_overflow"
	NoteNoCPUToTell          WarningCode = "no_cpu_to_tell"
	NoteNoCPUSaturated       WarningCode = "no_cpu_saturated"
	NoteNoRateKnown          WarningCode = "no_rate_known"
	NoteNoTransaction        WarningCode = "no_transaction"
	NoteBusyPolling          WarningCode = "busy_polling"
	NoteNoCPUToTellLatency   WarningCode = "no_cpu_to_tell_latency"
	NoteIterationsOf         WarningCode = "iterations_of"
	NoteSenderDevicePackets  WarningCode = "sender_device_packets"
	NoteReceiverDevicePacket WarningCode = "receiver_device_packets"
	NoteReceiverDeviceDrops  WarningCode = "receiver_device_drops"
	NoteWindowAlsoFull       WarningCode = "window_also_full"
)

// WarningCodes are all the codes, the result's then the limit's: a test
// holds each to a renderer in report and an entry in docs/results.md.
var WarningCodes = []WarningCode{
	WarnNoSenderFigures, WarnNoReceiverFigures, WarnSideError, WarnSideWarning, WarnChecksumErrors,
	WarnAmountNoSender, WarnAmountLengthOut, WarnAmountLost, WarnNoCPUFigures, WarnNoDataPathRecord,
	WarnZeroCopyRefused, WarnFQRateUnenforced, WarnPacingCapExceeded, WarnUDPBatch, WarnUDPSenderShort,
	WarnUDPLostAfterSend, WarnIPv4Fragmentation, WarnDeviceRxDrops, WarnDeviceOther, WarnUDPFragmented,
	WarnUDPOverMTU, WarnMPTCPFallback, WarnNoMPTCPRecord,
	NoteNoDirection, NoteBothDirections, NoteDirectionsDiffer, NoteOthersBusy, NoteNothingReceived,
	NoteRateNotInForce, NoteReceiverCPUAlso, NoteSoftIRQSaturated, NoteRwndWithoutCPU, NoteUDPLoss,
	NoteReceiverDeviceFull, NoteNoCPUToTell, NoteNoCPUSaturated, NoteNoRateKnown, NoteNoTransaction,
	NoteBusyPolling, NoteNoCPUToTellLatency, NoteIterationsOf, NoteSenderDevicePackets,
	NoteReceiverDevicePacket, NoteReceiverDeviceDrops, NoteWindowAlsoFull,
}

// Words is a warning of words alone, without a code: what a peer or
// another package said.
func Words(text string) Warning { return Warning{Text: text} }

// Name is the name n the warning quotes, "" when it has none.
func (w Warning) Name(n string) string { return w.Names[n] }

// Figure is the figure f the warning quotes, 0 when it has none.
func (w Warning) Figure(f string) float64 { return w.Figures[f] }

// Key is what tells two warnings apart: the words of one without a code,
// else its code and everything it quotes.
func (w Warning) Key() string {
	if w.Code == "" {
		return w.Text
	}
	w.Text = ""
	b, _ := json.Marshal(plainWarning(w)) // maps marshal sorted
	return string(b)
}

// plainWarning is Warning without its JSON methods.
type plainWarning Warning

// renderer is report's WarningText, set by SetRenderer: what fills Text in
// the JSON. Only report formats numbers for people, and result may not
// import it.
var renderer atomic.Pointer[func(Warning) string]

// SetRenderer sets the function that gives a coded warning its words in
// the JSON (report does, as it is linked in).
func SetRenderer(f func(Warning) string) { renderer.Store(&f) }

// words are the warning's words: the registered renderer's for a coded
// one, else its Text.
func (w Warning) words() string {
	if f := renderer.Load(); f != nil && w.Code != "" {
		return (*f)(w)
	}
	return w.Text
}

// MarshalJSON writes a coded warning as an object with its words, and
// one of words alone as a string, as every warning was before codes: a
// document read and written again is the same.
func (w Warning) MarshalJSON() ([]byte, error) {
	if w.Code == "" {
		return json.Marshal(w.Text)
	}
	w.Text = w.words()
	return json.Marshal(plainWarning(w))
}

// UnmarshalJSON reads a warning: an object, or a string as in documents
// written before warnings had codes.
func (w *Warning) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*w = Warning{}
		return json.Unmarshal(b, &w.Text)
	}
	var p plainWarning
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Warning(p)
	return nil
}

// Coded is the warning code with its names and figures. A figure that is
// not a number (NaN, an infinity) is left out: the JSON cannot carry it.
func Coded(code WarningCode, names map[string]string, figures map[string]float64) Warning {
	maps.DeleteFunc(figures, func(_ string, v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	return Warning{Code: code, Names: names, Figures: figures}
}
