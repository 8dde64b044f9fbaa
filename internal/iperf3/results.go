package iperf3

import (
	"encoding/json"
	"fmt"
	"math"

	"wirespeed/internal/spec"
)

// Results is what a side sends after EXCHANGE_RESULTS: its process's CPU
// and what each stream moved, by iperf3's stream id.
type Results struct {
	// CPU use of the side's own process over the test, in percent of one
	// CPU: user plus system, and each.
	CPUUtilTotal  float64
	CPUUtilUser   float64
	CPUUtilSystem float64
	// SenderHasRetransmits is 1 when the side sent on TCP and counted
	// retransmits, 0 when it sent without counting them, -1 when it only
	// received.
	SenderHasRetransmits int
	CongestionUsed       string
	Streams              []StreamResult
	// ServerOutput is set when the peer sent its own output along.
	ServerOutput bool
}

// StreamResult is one stream's figures in Results.
type StreamResult struct {
	ID          int
	Bytes       int64
	Retransmits int64   // -1 when the side does not know (it received)
	Jitter      float64 // seconds (UDP receiver)
	// Errors is datagrams lost (UDP receiver); Packets is datagrams sent,
	// or, for a receiver, the highest sequence number seen.
	Errors         int64
	Packets        int64
	OmittedErrors  int64
	OmittedPackets int64
	StartTime      float64 // seconds from the test's start
	EndTime        float64
}

// Bounds of results.
const (
	maxStreams = 2 * spec.MaxParallel
	maxCounter = int64(1) << 62
	maxCPUPct  = 1e5 // percent of one CPU: a thousand busy CPUs
	maxTimeS   = 2 * 24 * 3600.0
)

// ParseResults reads a peer's results strictly: the fields every iperf3
// 3.x sends must be there with their types and ranges, stream ids must be
// unique, and iperf3's -1 written as 2^64-1 is read as -1.
func ParseResults(b []byte) (Results, error) {
	if len(b) > MaxResultsLen {
		return Results{}, fmt.Errorf("%w: results of %d bytes, more than %d", ErrProtocol, len(b), MaxResultsLen)
	}
	o, err := parseObject("results", b)
	if err != nil {
		return Results{}, err
	}
	o.require("cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits", "streams")
	r := Results{
		CPUUtilTotal:         o.Float("cpu_util_total", 0, maxCPUPct, 0),
		CPUUtilUser:          o.Float("cpu_util_user", 0, maxCPUPct, 0),
		CPUUtilSystem:        o.Float("cpu_util_system", 0, maxCPUPct, 0),
		SenderHasRetransmits: int(o.Int("sender_has_retransmits", -1, 1, -1)),
		CongestionUsed:       o.String("congestion_used", 64, ""),
		ServerOutput:         o.has("server_output_text") || o.has("server_output_json"),
	}
	items := o.Array("streams", maxStreams)
	if o.err != nil {
		return Results{}, o.err
	}
	seen := map[int]bool{}
	for _, s := range items {
		s.require("id", "bytes", "retransmits", "jitter", "errors", "packets")
		st := StreamResult{
			ID:             int(s.Int("id", 1, 1<<20, 0)),
			Bytes:          s.Int("bytes", 0, maxCounter, 0),
			Retransmits:    s.Int("retransmits", -1, maxCounter, -1),
			Jitter:         s.Float("jitter", 0, 3600, 0),
			Errors:         s.Int("errors", -maxCounter, maxCounter, 0),
			Packets:        s.Int("packets", 0, maxCounter, 0),
			OmittedErrors:  s.Int("omitted_errors", -maxCounter, maxCounter, 0),
			OmittedPackets: s.Int("omitted_packets", 0, maxCounter, 0),
			StartTime:      s.Float("start_time", 0, maxTimeS, 0),
			EndTime:        s.Float("end_time", 0, maxTimeS, 0),
		}
		if s.err != nil {
			return Results{}, s.err
		}
		if seen[st.ID] {
			return Results{}, fmt.Errorf("%w: results list stream %d twice", ErrProtocol, st.ID)
		}
		seen[st.ID] = true
		if st.EndTime < st.StartTime {
			return Results{}, fmt.Errorf("%w: results stream %d ends (%g s) before it starts (%g s)", ErrProtocol, st.ID, st.EndTime, st.StartTime)
		}
		r.Streams = append(r.Streams, st)
	}
	return r, nil
}

type resultsWire struct {
	CPUUtilTotal         float64      `json:"cpu_util_total"`
	CPUUtilUser          float64      `json:"cpu_util_user"`
	CPUUtilSystem        float64      `json:"cpu_util_system"`
	SenderHasRetransmits int          `json:"sender_has_retransmits"`
	CongestionUsed       string       `json:"congestion_used,omitempty"`
	Streams              []streamWire `json:"streams"`
}

type streamWire struct {
	ID          int     `json:"id"`
	Bytes       int64   `json:"bytes"`
	Retransmits int64   `json:"retransmits"`
	Jitter      float64 `json:"jitter"`
	Errors      int64   `json:"errors"`
	Packets     int64   `json:"packets"`
	StartTime   float64 `json:"start_time"`
	EndTime     float64 `json:"end_time"`
}

// Marshal writes results as iperf3 reads them.
func (r Results) Marshal() ([]byte, error) {
	w := resultsWire{
		CPUUtilTotal: finite(r.CPUUtilTotal), CPUUtilUser: finite(r.CPUUtilUser), CPUUtilSystem: finite(r.CPUUtilSystem),
		SenderHasRetransmits: r.SenderHasRetransmits, CongestionUsed: r.CongestionUsed,
		Streams: []streamWire{},
	}
	for _, s := range r.Streams {
		w.Streams = append(w.Streams, streamWire{
			ID: s.ID, Bytes: s.Bytes, Retransmits: s.Retransmits, Jitter: finite(s.Jitter),
			Errors: s.Errors, Packets: s.Packets, StartTime: finite(s.StartTime), EndTime: finite(s.EndTime),
		})
	}
	return json.Marshal(w)
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
