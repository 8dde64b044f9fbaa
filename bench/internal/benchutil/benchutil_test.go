package benchutil

import (
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3} // sorted: 1 2 3 4 5
	for _, tc := range []struct {
		q, want float64
	}{{0, 1}, {0.25, 2}, {0.5, 3}, {0.75, 4}, {1, 5}, {0.125, 1.5}} {
		if got := Quantile(v, tc.q); got != tc.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", v, tc.q, got, tc.want)
		}
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median of 1..4 = %v, want 2.5", got)
	}
	if got := Median(nil); got != 0 {
		t.Errorf("Median(nil) = %v, want 0", got)
	}
}

func TestSpread(t *testing.T) {
	got := Spread([]float64{1.0, 0.9, 1.1, 0.8, 1.2})
	want := "1.000 (IQR 0.900-1.100, 0.800-1.200)"
	if got != want {
		t.Errorf("Spread = %q, want %q", got, want)
	}
}

func TestOrderABBA(t *testing.T) {
	o, err := NewOrder("abba", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]int
	for r := 0; r < 4; r++ {
		got = append(got, o.Round(r, 2))
	}
	want := [][]int{{0, 1}, {1, 0}, {0, 1}, {1, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("abba rounds = %v, want %v", got, want)
	}
	// Over two rounds each of three tools is first once and last once.
	if a, b := o.Round(0, 3), o.Round(1, 3); !reflect.DeepEqual(a, []int{0, 1, 2}) || !reflect.DeepEqual(b, []int{2, 1, 0}) {
		t.Errorf("abba with 3 tools = %v %v, want [0 1 2] [2 1 0]", a, b)
	}
	if _, err := NewOrder("first", 0); err == nil {
		t.Error("NewOrder(first) gave no error")
	}
}

func TestOrderRandomIsPermutation(t *testing.T) {
	o, _ := NewOrder("random", 1)
	firsts := map[int]int{}
	for r := 0; r < 200; r++ {
		p := o.Round(r, 3)
		seen := map[int]bool{}
		for _, i := range p {
			seen[i] = true
		}
		if len(p) != 3 || len(seen) != 3 {
			t.Fatalf("round %d = %v, not a permutation of 0..2", r, p)
		}
		firsts[p[0]]++
	}
	for i := 0; i < 3; i++ {
		if firsts[i] < 40 {
			t.Errorf("tool %d went first %d times in 200 random rounds", i, firsts[i])
		}
	}
}

// netperf 2.7.1 -k output of a TCP_RR run, recorded.
const netperfRR = `TRANSACTION_RATE=18982.893
P50_LATENCY=21
P99_LATENCY=90
LOCAL_SD=105.358
REMOTE_SD=105.358
SD_UNITS=usec/Tran
`

func TestKeyVal(t *testing.T) {
	m := KeyVal([]byte(netperfRR))
	want := map[string]float64{"TRANSACTION_RATE": 18982.893, "P50_LATENCY": 21, "P99_LATENCY": 90, "LOCAL_SD": 105.358, "REMOTE_SD": 105.358}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("KeyVal = %v, want %v", m, want)
	}
	if err := Need(m, "P50_LATENCY", "THROUGHPUT"); err == nil {
		t.Error("Need found THROUGHPUT in output without it")
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int
		wantErr bool
	}{{"64", 64, false}, {"1K", 1024, false}, {"128K", 131072, false}, {"1M", 1 << 20, false}, {"0", 0, true}, {"x", 0, true}, {"-1K", 0, true}} {
		got, err := Size(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Size(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestQuote(t *testing.T) {
	got := Quote([]string{"netperf", "-k", "A,B", "it's", ""})
	want := `netperf -k A,B 'it'\''s' ''`
	if got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
}

func TestRoundsFlags(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		wantErr string
		pairs   int
		length  time.Duration
		str     string
	}{
		{nil, "", 5, 5 * time.Second, "5s per run, 5 rounds per row, order abba"},
		{[]string{"-pairs", "7", "-l", "2s", "-order", "random", "-seed", "3"}, "", 7, 2 * time.Second,
			"2s per run, 7 rounds per row, order random (-seed 3)"},
		{[]string{"-pairs", "0"}, "-pairs 0: want at least 1", 0, 0, ""},
		{[]string{"-order", "zigzag"}, "zigzag", 0, 0, ""},
	} {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		r := RegisterRounds(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		ord, err := r.Check()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want one naming %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || ord == nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if r.Pairs != tt.pairs || r.Length != tt.length {
			t.Errorf("%v: pairs %d length %v, want %d %v", tt.args, r.Pairs, r.Length, tt.pairs, tt.length)
		}
		if got := r.String(); got != tt.str {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.str)
		}
	}
}
