package report

import (
	"bytes"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func rrulPoint(idle, loaded, p99 float64) result.Point {
	var p result.Point
	p.Spec = spec.Test{Kind: spec.RRUL}
	p.MsgSize = 131072
	p.Summary.UnderLoad = &result.UnderLoad{
		Idle:   result.Phase{All: result.Latency{P50Ms: idle, Samples: 100}},
		Loaded: result.Phase{All: result.Latency{P50Ms: loaded, P99Ms: p99, Samples: 400}},
	}
	return p
}

// TestSweepRRULColumns: a sweep of RRUL has the idle and loaded latency
// columns, each row its point's figures in them, last.
func TestSweepRRULColumns(t *testing.T) {
	var b bytes.Buffer
	doc := result.Document{Points: []result.Point{rrulPoint(0.12, 143.4, 247), rrulPoint(0.2, 13.04, 24.5)}}
	doc.Spec.Kind = spec.RRUL
	SweepTable(&b, doc, true)
	lines := strings.Split(b.String(), "\n")
	if f := strings.Fields(lines[0]); f[len(f)-3] != "Idle" || f[len(f)-1] != "Loaded" {
		t.Errorf("header %q", lines[0])
	}
	var rows [][]string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "0 ") {
			rows = append(rows, strings.Fields(l))
		}
	}
	want := [][]string{{"0.1", "143", "247"}, {"0.2", "13", "24"}}
	if len(rows) != 2 {
		t.Fatalf("rows %q\n%s", rows, b.String())
	}
	for i, r := range rows {
		if got := r[len(r)-3:]; strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d ends %q, want %q", i, got, want[i])
		}
	}
}

// TestUnderLoadLine: the answer line as the issue words it, from
// hand-made figures.
func TestUnderLoadLine(t *testing.T) {
	u := &result.UnderLoad{Load: spec.LoadBoth,
		Idle:              result.Phase{All: result.Latency{P50Ms: 0.12, Samples: 100}},
		Loaded:            result.Phase{All: result.Latency{P50Ms: 61.2, P99Ms: 82.3, Samples: 400}},
		IncreaseMs:        61.08,
		UpBitsPerSecond:   19.1e6,
		DownBitsPerSecond: 18.6e6,
		ResponsivenessRPM: 980.4,
	}
	if got, want := UnderLoadLine(u), "idle 0.1 ms, loaded 61 ms (+61 ms, p99 82 ms); 18.6 down, 19.1 up Mbit/s; responsiveness 980 RPM"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	u.Load = spec.LoadUp
	if got := UnderLoadLine(u); !strings.Contains(got, "; 19.1 up Mbit/s;") {
		t.Errorf("up only: %s", got)
	}
}

// TestQueueLine: where the queue is, from hand-made figures: a client
// side's tbf, and a routed lab's router egresses, named "(router)" and
// without socket figures.
func TestQueueLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		q    result.Queue
		want string
	}{
		{"client", result.Queue{Where: "client", QdiscMs: 96, Sides: []result.SideQueue{
			{Side: result.Local, Dev: "wsul-va", Kind: "tbf", BacklogBytes: 240000, DelayMs: 96, RateBitsPerSecond: 20e6},
			{Side: result.Remote, Dev: "wsul-vb", Kind: "tbf"},
		}, Sockets: []result.SocketQueue{{Side: result.Local, WaitMs: 0.4}, {Side: result.Remote}}},
			"the queue: tbf on wsul-va (client side), about 96 ms (234 KBytes at 20.0 Mbits/sec); 96 of the 100 ms increase; the flows' own data waits under 1 ms in their sockets"},
		{"router", result.Queue{Where: "router", QdiscMs: 100, Sides: []result.SideQueue{
			{Side: result.Local, Dev: "wst-b", Kind: "noqueue"},
			{Side: result.Remote, Dev: "wst-a", Kind: "noqueue"},
			{Side: result.Router, Dev: "wst-rb", Netns: "wst-x-r", Kind: "tbf", BacklogBytes: 200000, DelayMs: 80, RateBitsPerSecond: 20e6},
			{Side: result.Router, Dev: "wst-ra", Netns: "wst-x-r", Kind: "tbf", BacklogBytes: 50000, DelayMs: 20, RateBitsPerSecond: 20e6},
		}, Sockets: []result.SocketQueue{{Side: result.Remote, WaitMs: 0.2}}},
			"the queues: tbf on wst-rb (router), about 80 ms (195 KBytes at 20.0 Mbits/sec); tbf on wst-ra (router), about 20 ms (48.8 KBytes at 20.0 Mbits/sec); 100 of the 100 ms increase; the flows' own data waits under 1 ms in their sockets"},
		// The run: the sockets hold far more than the increase,
		// said apart from the path's parts; 60 of 100 ms sampled, the
		// rest elsewhere.
		{"sockets apart", result.Queue{Where: "both", QdiscMs: 60, ElsewhereMs: 40, Sides: []result.SideQueue{
			{Side: result.Local, Dev: "wst-b", Kind: "tbf", BacklogBytes: 75000, DelayMs: 30, RateBitsPerSecond: 20e6},
			{Side: result.Remote, Dev: "wst-a", Kind: "tbf", BacklogBytes: 75000, DelayMs: 30, RateBitsPerSecond: 20e6},
		}, Sockets: []result.SocketQueue{{Side: result.Local, NotsentBytes: 1.35e6, WaitMs: 540}, {Side: result.Remote, NotsentBytes: 1.2e6, WaitMs: 491}}},
			"the queues: tbf on wst-b (client side), about 30 ms (73.2 KBytes at 20.0 Mbits/sec); tbf on wst-a (server side), about 30 ms (73.2 KBytes at 20.0 Mbits/sec); 60 of the 100 ms increase, 40 ms elsewhere on the path; the flows' own data in their sockets, not in the probes' path: client 1.29 MBytes, a 540 ms wait; server 1.14 MBytes, a 491 ms wait"},
		{"elsewhere", result.Queue{Where: "elsewhere", QdiscMs: 3, ElsewhereMs: 97, Sides: []result.SideQueue{
			{Side: result.Router, Dev: "wst-rb", Kind: "tbf", BacklogBytes: 7500, DelayMs: 3, RateBitsPerSecond: 20e6},
		}}, "the queue is elsewhere on the path: the queues sampled hold about 3.0 ms of the 100 ms increase"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &result.UnderLoad{IncreaseMs: 100, Queue: &tt.q}
			if got := QueueLine(u); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRRULAnswerFirst: run's default text of a recorded 2 s RRUL run
// (testdata/kinds/rrul.json, 8 flows) shows one interval line a second,
// no flow's own line, and the answer (the latency line, where the queue
// is, what limited the run) before the detail (the round trip table,
// the flows, netperf's table); -v shows each flow's lines.
func TestRRULAnswerFirst(t *testing.T) {
	doc := load(t, filepath.Join("kinds", "rrul.json"))
	res := doc.Result
	text, intervals := runText(res, "127.0.0.1:42629 (embedded server)", TextOptions{})
	lines := strings.Split(text, "\n")
	flowLine := regexp.MustCompile(`^\[ *([0-9]+|SUM)\]`)
	for _, l := range lines {
		if flowLine.MatchString(l) {
			t.Errorf("a flow's interval line in the default text: %q", l)
		}
	}
	if secs := int(math.Ceil(res.Summary.ElapsedS)); intervals < 1 || intervals > secs {
		t.Errorf("%d interval lines for a %.2f s run, want 1 to %d:\n%s", intervals, res.Summary.ElapsedS, secs, text)
	}
	// Each interval line has both directions' sums: 6.91 and 5.64 Gbit/s
	// the first second, as the recorded directions' first intervals say.
	if !strings.Contains(text, "6.91 Gbits/sec  5.64 Gbits/sec") {
		t.Errorf("no line with the first second's sums, 6.91 up and 5.64 down:\n%s", text)
	}
	at := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return i
			}
		}
		t.Fatalf("no line starts %q:\n%s", prefix, text)
		return -1
	}
	answer := []string{"idle ", "no queue built", "limited by"}
	detail := []string{"round trip (ms)", "flows:", "Recv"}
	for _, a := range answer {
		for _, d := range detail {
			if at(a) > at(d) {
				t.Errorf("%q (the answer) comes after %q (the detail):\n%s", a, d, text)
			}
		}
	}
	verbose, _ := runText(res, "127.0.0.1:42629 (embedded server)", TextOptions{Verbose: true})
	if n := len(regexp.MustCompile(`(?m)^\[  [1-8]\] `).FindAllString(verbose, -1)); n != 8*len(res.Directions[0].Intervals) {
		t.Errorf("-v shows %d flows' interval lines, want 8 a second:\n%s", n, verbose)
	}
}
