package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// load reads a recorded results document from testdata.
func load(t *testing.T, name string) result.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestText(t *testing.T) {
	for _, name := range []string{"stream", "bidir", "udp", "rr"} {
		t.Run(name, func(t *testing.T) {
			doc := load(t, name+".json")
			var buf bytes.Buffer
			TextIn(&buf, doc.Result, TextOptions{})
			testkit.Golden(t, name+".txt.golden", buf.String())
		})
	}
}

func TestTextInterrupted(t *testing.T) {
	doc := load(t, "stream.json")
	doc.Interrupted = true
	doc.Warnings = []result.Warning{result.Words("server: no result from the server within 3s of the interrupt")}
	var buf bytes.Buffer
	TextIn(&buf, doc.Result, TextOptions{})
	out := buf.String()
	if !strings.HasPrefix(out, "INTERRUPTED") || !strings.Contains(out, "warning: server: no result") {
		t.Errorf("interrupted result does not say so:\n%s", out)
	}
}

func TestTradeoff(t *testing.T) {
	doc := load(t, "tradeoff.json")
	if len(doc.Runs) != 2 {
		t.Fatalf("fixture has %d runs", len(doc.Runs))
	}
	var buf bytes.Buffer
	TradeoffIn(&buf, doc.Runs[0], doc.Runs[1], result.Tradeoff{Ratio: 0.5}, 0)
	testkit.Golden(t, "tradeoff.txt.golden", buf.String())
}

func TestTicks(t *testing.T) {
	var buf bytes.Buffer
	for _, name := range []string{"stream", "bidir", "udp", "rr"} {
		doc := load(t, name+".json")
		IntervalHeader(&buf, doc.Spec.Kind)
		for _, d := range doc.Directions {
			for i, iv := range d.Intervals {
				tk := result.Tick{Direction: d.Direction, Index: i, Interval: iv}
				for _, s := range d.Streams {
					if i < len(s.Receiver.Intervals) {
						tk.Streams = append(tk.Streams, result.StreamInterval{ID: s.ID, Interval: s.Receiver.Intervals[i]})
					}
				}
				TickIn(&buf, tk, 0)
			}
		}
	}
	// The recorded UDP run lost nothing, so its lines cannot tell the
	// loss's denominator: an interval that lost 1567 of the 4247
	// datagrams sent in it (2680 received) lost 36.9% of them, as
	// iperf's "lost/total" reads; over the received it would be 58.5%.
	var lossy bytes.Buffer
	TickIn(&lossy, result.Tick{Direction: spec.ClientToServer, Index: 2, Interval: result.Interval{
		StartS: 1, EndS: 1.5, Bytes: 2680 * 1472, BitsPerSecond: 2680 * 1472 * 8 / 0.5, Packets: 2680, Lost: 1567, JitterMs: 0.412}}, 0)
	if want := "0.412 ms  1567/4247 (37%)"; !strings.Contains(lossy.String(), want) {
		t.Errorf("interval line %q, want %q in it", lossy.String(), want)
	}
	buf.Write(lossy.Bytes())
	testkit.Golden(t, "ticks.txt.golden", buf.String())
}

func TestHeading(t *testing.T) {
	var buf bytes.Buffer
	sp := spec.Default()
	Heading(&buf, sp, "127.0.0.1:7575")
	sp.Kind, sp.Parallel, sp.Omit, sp.CongestionControl = spec.TCPBidir, 4, 2e9, "cubic"
	Heading(&buf, sp, "[::1]:7575")
	testkit.Golden(t, "heading.txt.golden", buf.String())
}

// TestSockOptsHeading: the socket options are named under the heading.
func TestSockOptsHeading(t *testing.T) {
	var buf bytes.Buffer
	sp := spec.Default()
	sp.BindAddr, sp.BindDev, sp.ClientPort, sp.Parallel, sp.TOS, sp.MSS = "192.0.2.10", "eth1", 5001, 4, 0xb8, 1000
	Heading(&buf, sp, "192.0.2.1:7575")
	sp = spec.Default()
	sp.Kind, sp.SendSize, sp.ClientPort, sp.TOS, sp.DontFragment = spec.UDPStream, 1472, 6000, 0x29, true
	Heading(&buf, sp, "192.0.2.1:7575")
	testkit.Golden(t, "sockopts_heading.txt.golden", buf.String())
}

func TestCSV(t *testing.T) {
	for _, name := range []string{"bidir", "tradeoff", "cpu", "bidir_cpu", "rr", "udp"} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := CSV(&buf, load(t, name+".json")); err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, name+".csv.golden", buf.String())
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bidir.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := JSON(&buf, load(t, "bidir.json")); err != nil {
		t.Fatal(err)
	}
	var a, b any
	json.Unmarshal(raw, &a)
	json.Unmarshal(buf.Bytes(), &b)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("document changed in a round trip (-fixture +written):\n%s", d)
	}
	// The fields docs/results.md promises.
	var m map[string]any
	json.Unmarshal(buf.Bytes(), &m)
	sum, _ := m["summary"].(map[string]any)
	for _, k := range []string{"throughput_bps", "sender_throughput_bps", "bytes", "elapsed_s", "retransmits"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	for _, k := range []string{"schema", "tool", "spec", "intervals", "streams", "directions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("document lacks %s", k)
		}
	}
}

// TestTextCPU: the netperf CPU columns, for one direction (CPU on the
// direction's row) and for two (CPU on the total row), and with -v the
// top-like line per side.
func TestTextCPU(t *testing.T) {
	for _, name := range []string{"cpu", "bidir_cpu"} {
		t.Run(name, func(t *testing.T) {
			doc := load(t, name+".json")
			var buf bytes.Buffer
			TextIn(&buf, doc.Result, TextOptions{})
			testkit.Golden(t, name+".txt.golden", buf.String())
			buf.Reset()
			TextIn(&buf, doc.Result, TextOptions{Verbose: true})
			testkit.Golden(t, name+"-v.txt.golden", buf.String())
		})
	}
}

func f64(v float64) *float64 { return &v }

// TestTextConfidence: a mean over iterations says how many, what was asked
// and, per figure, what was reached.
func TestTextConfidence(t *testing.T) {
	doc := load(t, "cpu.json")
	doc.Summary.Confidence = &result.Confidence{
		Level: 0.99, WidthPct: 5, Iterations: 10, Stop: "max_hit",
		FigureConfidence: result.FigureConfidence{AchievedPct: f64(2.4), Reached: true, Lo: f64(5.1e10), Hi: f64(5.2e10)},
		LocalCPU:         &result.FigureConfidence{AchievedPct: f64(7.25), Reached: false},
		RemoteCPU:        &result.FigureConfidence{},
	}
	doc.Warnings = []result.Warning{result.Words("local CPU utilization: confidence interval not reached in 10 iterations: +/-3.6%, asked +/-2.5% @ 99% conf.")}
	var buf bytes.Buffer
	TextIn(&buf, doc.Result, TextOptions{})
	testkit.Golden(t, "confidence.txt.golden", buf.String())
}

// TestTextUDPFragmented renders the run the issue reported: 9216-byte
// datagrams flooding a 100 Mbit/s link, 611451 sent and 19 received. The
// text must warn of the fragmentation, and -v show the kernels'
// fragmentation counters, not only print "Okay 611451, Errors 0".
func TestTextUDPFragmented(t *testing.T) {
	sp := spec.Default()
	sp.Kind, sp.SendSize, sp.Duration, sp.RateBitsPerSecond = spec.UDPStream, 9216, 2e9, 0
	snd := result.Flow{Direction: spec.ClientToServer, Side: result.Local, Role: result.Sender, ElapsedS: 2, Bytes: 611451 * 9216,
		Streams: []result.StreamSide{{ID: 1, Side: result.Local, Role: result.Sender, Bytes: 611451 * 9216, Packets: 611451, TotalPackets: 611451, SendErrors: 3923}}}
	rcv := result.Flow{Direction: spec.ClientToServer, Side: result.Remote, Role: result.Receiver, ElapsedS: 2, Bytes: 19 * 9216,
		Streams: []result.StreamSide{{ID: 1, Side: result.Remote, Role: result.Receiver, Bytes: 19 * 9216, SeqUnique: 19}}}
	local := &measure.Counters{UDP: measure.UDPCounters{SndbufErrors: 7806}, IP: measure.IPCounters{FragOKs: 611451, FragCreates: 3668706}}
	remote := &measure.Counters{UDP: measure.UDPCounters{InDatagrams: 19}, IP: measure.IPCounters{ReasmReqds: 16400, ReasmOKs: 19, ReasmFails: 2700, ReasmTimeout: 31}}
	res := result.Join(sp,
		result.SideResult{Side: result.Local, Flows: []result.Flow{snd}, Counters: local},
		result.SideResult{Side: result.Remote, Flows: []result.Flow{rcv}, Counters: remote})
	var buf bytes.Buffer
	TextIn(&buf, res, TextOptions{})
	testkit.Golden(t, "udp-fragmented.txt.golden", buf.String())
	buf.Reset()
	TextIn(&buf, res, TextOptions{Verbose: true})
	testkit.Golden(t, "udp-fragmented-v.txt.golden", buf.String())
}
