package result

import (
	"errors"
	"math"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// honestSide is a server's receiving side of a 10 s TCP_STREAM at
// 9.4 Gbit/s over a device, as a wirespeed server reports it.
func honestSide() SideResult {
	const bytes = 11_750_000_000 // 9.4 Gbit/s for 10 s
	return SideResult{Side: Remote, Flows: []Flow{{
		Direction: spec.ClientToServer, Side: Remote, Role: Receiver, StartOffsetS: 0.001, ElapsedS: 10, Bytes: bytes,
		Intervals: []Interval{{StartS: 0, EndS: 1, Bytes: bytes / 10, BitsPerSecond: 9.4e9, Lost: -2}},
		Streams:   []StreamSide{{ID: 1, Side: Remote, Role: Receiver, Bytes: bytes, TotalBytes: bytes + 1000, Calls: 1_000_000}},
	}},
		Wire: &netdev.Wire{Device: "eth0", ElapsedS: 10, Link: netdev.LinkCounters{RxBytes: 12e9, RxPackets: 8e6, TxBytes: 5e8, TxPackets: 4e6},
			Ethtool: map[string]int64{"rx_gro_packets": -3}},
		Counters: &measure.Counters{All: map[string]int64{"Tcp.CurrEstab": -1}},
		CPU:      &measure.CPU{UtilPct: 31.5, CPUs: 8, ElapsedS: 10, BusiestCPU: -1},
	}
}

func TestCheckSide(t *testing.T) {
	tests := []struct {
		name     string
		change   func(*SideResult)
		wantPath string // "" for none: the side passes
		wantWhy  string
	}{
		{"honest", func(*SideResult) {}, "", ""},
		// Issue 47 item 4's figures: 9e18 bytes in 1e-300 s made the
		// rate +Inf.
		{"9e18 bytes in 1e-300 s", func(s *SideResult) { s.Flows[0].Bytes, s.Flows[0].ElapsedS = 9e18, 1e-300 },
			"result.flows[0].bytes", "more than 1e+13 bit/s could move in its window of 1e-300 s"},
		// An RRUL flow's receiver on a loaded machine: its first byte
		// came 33 us before the end.
		{"bytes that fit in 1e-300 s judged over 1 ms, in a window shorter than the clock's", func(s *SideResult) {
			s.Flows[0].Bytes, s.Flows[0].ElapsedS, s.Flows[0].Intervals, s.Flows[0].Streams = 1e6, 1e-300, nil, nil
		}, "result.flows[0].elapsed_s", "a window shorter than a nanosecond"},
		{"a short window, bytes that fit", func(s *SideResult) {
			s.Flows[0].ElapsedS, s.Flows[0].Bytes, s.Flows[0].Intervals = 33e-6, 65536, nil
			s.Flows[0].Streams[0].Bytes, s.Flows[0].Streams[0].Calls = 65536, 3
		}, "", ""},
		{"a short window, bytes that do not fit", func(s *SideResult) {
			s.Flows[0].ElapsedS, s.Flows[0].Intervals = 33e-6, nil
		}, "result.flows[0].bytes", "more than 1e+13 bit/s could move"},
		{"a window longer than the run", func(s *SideResult) { s.Flows[0].ElapsedS = 1e6 }, "result.flows[0].elapsed_s", "longer than the run"},
		{"negative bytes", func(s *SideResult) { s.Flows[0].Bytes = -9e18 }, "result.flows[0].bytes", "below 0"},
		{"a stream's bytes past the rate", func(s *SideResult) { s.Flows[0].Streams[0].Bytes = 9e18 }, "result.flows[0].streams[0].bytes", "could move"},
		{"a stream's life total past the rate", func(s *SideResult) { s.Flows[0].Streams[0].TotalBytes = 9e18 }, "result.flows[0].streams[0].total_bytes", "could move"},
		{"an interval's rate", func(s *SideResult) { s.Flows[0].Intervals[0].BitsPerSecond = 7.2e299 },
			"result.flows[0].intervals[0].throughput_bps", "more than 1e+20"},
		// A window's last interval of a few microseconds: a batch of
		// reads in it (server's TestLongHighRateIntervals saw 6.8e13).
		{"an interval's rate past the line", func(s *SideResult) { s.Flows[0].Intervals[0].BitsPerSecond = 6.8e13 }, "", ""},
		{"an interval's bytes in no time", func(s *SideResult) { s.Flows[0].Intervals[0].EndS, s.Flows[0].Intervals[0].Bytes = 0, 9e18 },
			"result.flows[0].intervals[0].bytes", "could move"},
		{"an interval that ends before it starts", func(s *SideResult) { s.Flows[0].Intervals[0].StartS = 2 },
			"result.flows[0].intervals[0].end_s", "before the interval's start"},
		{"a negative latency", func(s *SideResult) {
			s.Flows[0].Streams[0].Latency = &stats.Latency{Mean: -1}
		}, "result.flows[0].streams[0].latency_us.mean", "below 0"},
		{"device packets 1e19", func(s *SideResult) { s.Wire.Link.RxPackets = 1e19 }, "result.wire.link.rx_packets", "could move"},
		{"device packets past its bytes", func(s *SideResult) { s.Wire.Link.TxPackets = 6e8 }, "result.wire.link.tx_packets", "more packets than the 500000000 bytes"},
		{"a device window of 1e-300 s", func(s *SideResult) { s.Wire.ElapsedS = 1e-300 }, "result.wire.link.rx_bytes", "could move in its window of 1e-300 s"},
		{"a CPU share of 1e300 percent", func(s *SideResult) { s.CPU.UtilPct = 1e300 }, "result.cpu.util_pct", "more than 1e+20"},
		{"a CPU share of 5000 percent", func(s *SideResult) { s.CPU.UtilPct = 5000 }, "result.cpu.util_pct", "a percentage above 1000"},
		{"a CPU window longer than the run", func(s *SideResult) { s.CPU.ElapsedS = 11 }, "result.cpu.elapsed_s", "longer than the run"},
		{"NaN", func(s *SideResult) { s.Flows[0].StartOffsetS = math.NaN() }, "result.flows[0].start_offset_s", "not a finite number"},
		{"a counter's negative change", func(s *SideResult) { s.Counters.TCP.RetransSegs = -5 }, "result.counters.tcp.retrans_segs", "below 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := honestSide()
			tt.change(&s)
			err := CheckSide(s, 10.5)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("CheckSide: %v; want none", err)
				}
				return
			}
			var fe *FigureError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFigure) {
				t.Fatalf("CheckSide: %v; want a FigureError", err)
			}
			if fe.Path != tt.wantPath || !strings.Contains(fe.Why, tt.wantWhy) {
				t.Errorf("CheckSide: %v; want %s refused: %s", err, tt.wantPath, tt.wantWhy)
			}
		})
	}
}

func TestCheckReport(t *testing.T) {
	r := IntervalReport{Direction: spec.ClientToServer, Role: Receiver, Index: 0,
		Interval: Interval{StartS: 0, EndS: 1, Bytes: 1 << 20, BitsPerSecond: 8 << 20}}
	r.Streams = []StreamInterval{{ID: 1, Interval: r.Interval}}
	if err := CheckReport(r, 2); err != nil {
		t.Fatalf("an honest report: %v", err)
	}
	bad := r
	bad.Streams = []StreamInterval{{ID: 1, Interval: Interval{StartS: 0, EndS: 1e-300, Bytes: 9e18}}}
	if err := CheckReport(bad, 2); err == nil || !strings.Contains(err.Error(), "interval report.streams[0].bytes is 9000000000000000000") {
		t.Errorf("9e18 bytes in 1e-300 s: %v", err)
	}
	bad = r
	bad.Interval.BitsPerSecond = -7.2e19
	if err := CheckReport(bad, 2); err == nil || !strings.Contains(err.Error(), "interval report.interval.throughput_bps is -7.2e+19: below 0") {
		t.Errorf("a negative rate: %v", err)
	}
	bad = r
	bad.Interval.StartS, bad.Interval.EndS = 30, 31
	if err := CheckReport(bad, 2); err == nil || !strings.Contains(err.Error(), "after the run's end") {
		t.Errorf("an interval after the run: %v", err)
	}
}

func TestCheckFinite(t *testing.T) {
	doc := Document{Schema: Schema, Result: Result{Directions: []DirectionResult{{}, {Summary: Summary{BitsPerSecond: math.Inf(1)}}}}}
	err := CheckFinite(doc)
	var fe *FigureError
	if !errors.As(err, &fe) || fe.Path != "directions[1].summary.throughput_bps" || fe.Value != "+Inf" {
		t.Fatalf("CheckFinite: %v; want directions[1].summary.throughput_bps named as +Inf", err)
	}
	doc.Directions[1].Summary.BitsPerSecond = 1
	doc.Local.Wire = &Wire{OtherPct: math.NaN()}
	if err := CheckFinite(doc); err == nil || !strings.Contains(err.Error(), "local.wire.other_pct is NaN") {
		t.Fatalf("CheckFinite: %v; want local.wire.other_pct named", err)
	}
	doc.Local.Wire = nil
	if err := CheckFinite(doc); err != nil {
		t.Fatalf("CheckFinite of a finite document: %v", err)
	}
}

func TestCheckJoined(t *testing.T) {
	r := Join(spec.Default(), SideResult{Side: Local}, honestSide())
	if err := CheckJoined(r); err != nil {
		t.Fatalf("an honest joined result: %v", err)
	}
	// A mean of noisy iterations: its interval's lower bound below 0.
	lo, hi := -1e8, 3e9
	r.Summary.Confidence = &Confidence{Level: 0.99, Iterations: 3, FigureConfidence: FigureConfidence{Lo: &lo, Hi: &hi}}
	if err := CheckJoined(r); err != nil {
		t.Fatalf("an honest mean with a negative lower bound: %v", err)
	}
	r.Summary.BitsPerSecond = -7.2e19
	if err := CheckJoined(r); err == nil || !strings.Contains(err.Error(), "result.summary.throughput_bps is -7.2e+19: below 0") {
		t.Errorf("a planted -7.2e13 Mbit/s: %v", err)
	}
	r.Summary.BitsPerSecond = 7.2e14
	if err := CheckJoined(r); err == nil || !strings.Contains(err.Error(), "result.summary.throughput_bps is 7.2e+14: more than 1e+13 bit/s") {
		t.Errorf("7.2e14 bit/s: %v", err)
	}
	// An interval's rate may be honestly past the line (fits).
	r.Summary.BitsPerSecond = 1e9
	r.Intervals = []Interval{{StartS: 0, EndS: 1e-6, Bytes: 8 << 20, BitsPerSecond: 6.8e13}}
	if err := CheckJoined(r); err != nil {
		t.Errorf("an interval of 6.8e13 bit/s: %v", err)
	}
}

// TestEncodeNonFinite: a document holding +Inf is not written, and the
// error names the figure (issue 47 item 4: "json: unsupported value:
// +Inf" named nothing).
func TestEncodeNonFinite(t *testing.T) {
	var b strings.Builder
	doc := Document{Schema: Schema, Result: Result{Summary: Summary{BitsPerSecond: math.Inf(1)}}}
	err := Encode(&b, doc)
	if err == nil || !strings.Contains(err.Error(), "summary.throughput_bps is +Inf") || b.Len() != 0 {
		t.Errorf("Encode: %v, wrote %d bytes; want an error naming summary.throughput_bps and nothing written", err, b.Len())
	}
	mesh := MeshDocument{Schema: MeshSchema, Pairs: []MeshPair{{Source: "a", Destination: "b", Result: &Result{Summary: Summary{ElapsedS: math.NaN()}}}}}
	err = EncodeMesh(&b, mesh)
	if err == nil || !strings.Contains(err.Error(), "pairs[0].result.summary.elapsed_s is NaN") || b.Len() != 0 {
		t.Errorf("EncodeMesh: %v, wrote %d bytes; want an error naming pairs[0].result.summary.elapsed_s", err, b.Len())
	}
}
