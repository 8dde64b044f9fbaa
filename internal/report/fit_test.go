package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// kinds are the recorded runs of every test kind (testdata/kinds: 2 s
// runs on loopback, recorded with run --json on a busy 2-CPU machine, so
// that their warnings and limits are the ones a user meets) with the
// most lines each may take in the default text besides its interval
// lines: iperf3 takes 14 lines in all for a 10 s run, netperf 7.
var kinds = []struct {
	file, server string
	budget       int
}{
	{"tcp_stream", "127.0.0.1:42629 (embedded server)", 12},
	{"tcp_maerts", "127.0.0.1:42629 (embedded server)", 12},
	{"tcp_bidir", "127.0.0.1:42629 (embedded server)", 14},
	{"tcp_stream_p4", "127.0.0.1:42629 (embedded server)", 12},
	{"udp_stream", "127.0.0.1:42629 (embedded server)", 14},
	{"udp_stream_rate", "127.0.0.1:42629 (embedded server)", 16},
	{"tcp_rr", "127.0.0.1:42629 (embedded server)", 12},
	{"udp_rr", "127.0.0.1:42629 (embedded server)", 12},
	{"tcp_crr", "127.0.0.1:42629 (embedded server)", 13},
	{"rrul", "127.0.0.1:42629 (embedded server)", 32},
	{"iperf3_tcp", "127.0.0.1:5201 (iperf3 server)", 14},
	{"iperf3_udp", "127.0.0.1:5201 (iperf3 server)", 16},
}

// runText is what run prints for a recorded result, as its observer
// prints it live: the heading, the interval lines in the test's order,
// then the result.
func runText(res result.Result, server string, o TextOptions) (text string, intervalLines int) {
	var b bytes.Buffer
	Heading(&b, res.Spec, server)
	var ticks bytes.Buffer
	order := NewTickOrder(res.Spec)
	var tks []result.Tick
	for _, d := range res.Directions {
		for i, iv := range d.Intervals {
			tk := result.Tick{Direction: d.Direction, Index: i, Interval: iv, Probes: answered(res.Summary.UnderLoad, iv)}
			for _, s := range d.Streams {
				if ivs := s.Receiver.Intervals; i < len(ivs) {
					tk.Streams = append(tk.Streams, result.StreamInterval{ID: s.ID, Interval: ivs[i]})
				}
			}
			tks = append(tks, tk)
		}
	}
	// Live, the directions' ticks of an interval come together.
	slices.SortStableFunc(tks, func(a, b result.Tick) int { return a.Index - b.Index })
	for _, tk := range tks {
		Ticks(&ticks, order.Add(tk), res.Spec.Kind, 0, o.Verbose)
	}
	Ticks(&ticks, order.Flush(), res.Spec.Kind, 0, o.Verbose)
	if ticks.Len() > 0 {
		IntervalHeaderIn(&b, res.Spec.Kind, o.Verbose)
		b.Write(ticks.Bytes())
	}
	fmt.Fprintln(&b)
	TextIn(&b, res, o)
	return b.String(), strings.Count(ticks.String(), "\n")
}

// TestTextFits holds run's default text of every kind to Width columns
// and its line budget, and keeps what it and -v print as goldens.
func TestTextFits(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.file, func(t *testing.T) {
			doc := load(t, filepath.Join("kinds", k.file+".json"))
			text, intervals := runText(doc.Result, k.server, TextOptions{})
			checkWidth(t, k.file, text)
			if n := strings.Count(text, "\n") - intervals; n > k.budget {
				t.Errorf("%s: %d lines besides %d interval lines, more than its budget of %d:\n%s", k.file, n, intervals, k.budget, text)
			}
			testkit.Golden(t, filepath.Join("kinds", k.file+".txt.golden"), text)
			verbose, _ := runText(doc.Result, k.server, TextOptions{Verbose: true})
			if len(verbose) <= len(text) {
				t.Errorf("%s: -v adds nothing", k.file)
			}
			testkit.Golden(t, filepath.Join("kinds", k.file+"-v.txt.golden"), verbose)
		})
	}
}

// TestGoldensFit holds every golden of text the default output shows
// (not CSV, JSON or -v's) to Width columns, so that a new field cannot
// widen one unseen.
func TestGoldensFit(t *testing.T) {
	var names []string
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".golden") {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".csv.golden"), strings.HasSuffix(path, ".json.golden"), strings.HasSuffix(path, "-v.txt.golden"):
			return nil
		}
		names = append(names, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 30 {
		t.Fatalf("found only %d goldens under testdata", len(names))
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkWidth(t, name, string(b))
	}
}

// checkWidth fails t for every line of text wider than Width.
func checkWidth(t *testing.T, name, text string) {
	t.Helper()
	testkit.CheckWidth(t, name, text, Width)
}

// TestBrief: a line too long is cut after its last clause that fits,
// parentheses closed, and says so; one that fits is left alone.
func TestBrief(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short: as it is", 20, "short: as it is"},
		{"local side: no CPU figures: open /proc/stat: permission denied", 40, "local side: no CPU figures (-v: more)"},
		{"the link (tbf 50.0 Mbits/sec on wst-b, local side; goodput 99.3% of the 47.8 Mbits/sec it allows)", 61,
			"the link (tbf 50.0 Mbits/sec on wst-b, local side) (-v: more)"},
		{"a (b (c, d), e) f g h i j k", 20, "a (b (c)) (-v: more)"},
		{"one two three four five six", 20, "one two (-v: more)"},
		// A strong end (": ") is taken over a weak one a little later,
		// not over one far later.
		{"a: fact here (13%): the local side (x) was held back", 47, "a: fact here (13%) (-v: more)"},
		{"a: b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q", 48, "a: b, c, d, e, f, g, h, i, j, k, l, m (-v: more)"},
		{"abcdefghijklmnopqrstuvwxyz", 20, "abcdefghi (-v: more)"},
		{"µµµµµµµµ: µµµµµµµµµµµµµµµµµµµµ", 20, "µµµµµµµµ (-v: more)"},
	} {
		got := brief(tt.s, tt.n)
		if got != tt.want {
			t.Errorf("brief(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if cols(got) > tt.n {
			t.Errorf("brief(%q, %d) = %q: %d columns", tt.s, tt.n, got, cols(got))
		}
	}
}

// TestFitClauses: clauses continue on the next line, indented, where
// the line is wider than Width; a line that fits is left alone.
func TestFitClauses(t *testing.T) {
	short := "iteration 1 of at most 3: 9341.22 10^6bits/sec; so far +/-1.2% @ 99% conf."
	if got := FitClauses(short); len(got) != 1 || got[0] != short {
		t.Errorf("FitClauses(%q) = %q", short, got)
	}
	long := strings.Repeat("x", 60) + "; " + strings.Repeat("y", 50) + "; z"
	got := FitClauses(long)
	want := []string{strings.Repeat("x", 60) + ";", "  " + strings.Repeat("y", 50) + "; z"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FitClauses = %q, want %q", got, want)
	}
}

// answered is what the client's live output gives an RRUL tick of
// interval iv: the round trips of the probes recorded whose answers came
// within it (endpoint.LiveProbes); nil for other tests.
func answered(u *result.UnderLoad, iv result.Interval) *result.Latency {
	if u == nil {
		return nil
	}
	rec := u.Probes
	from, to := rec.LoadStartS+iv.StartS, rec.LoadStartS+iv.EndS
	var ms []float64
	for _, p := range append(append([]result.ProbePoint(nil), rec.UDP...), rec.TCP...) {
		if at := p.T + p.RTTMs/1e3; !p.Lost && at >= from && at < to {
			ms = append(ms, p.RTTMs)
		}
	}
	l := result.LatencyOf(ms, 0)
	return &l
}
