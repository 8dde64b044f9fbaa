package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exactUP is the two-sided exact Mann-Whitney p of samples a and b
// without ties, by listing every way to split their values into groups
// of len(a) and len(b): the share of splits whose U is at least as far
// from its mean as a's, counted from the nearer tail and doubled (R's
// wilcox.test). Worked out here, apart from package stats.
func exactUP(a, b []float64) float64 {
	all := append(append([]float64(nil), a...), b...)
	u := func(in []bool) float64 {
		n := 0.0
		for i, x := range all {
			for j, y := range all {
				if in[i] && !in[j] && x > y {
					n++
				}
			}
		}
		return n
	}
	first := make([]bool, len(all))
	for i := range a {
		first[i] = true
	}
	obs := u(first)
	var le, ge, total float64
	for mask := 0; mask < 1<<len(all); mask++ {
		in := make([]bool, len(all))
		k := 0
		for i := range all {
			if mask&(1<<i) != 0 {
				in[i] = true
				k++
			}
		}
		if k != len(a) {
			continue
		}
		total++
		v := u(in)
		if v <= obs {
			le++
		}
		if v >= obs {
			ge++
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}

// TestRunTradeoffIterated: run --tradeoff with 4 iterations of each
// direction against the embedded server tests the two directions'
// iterations and prints p beside the ratio; the JSON's p is the exact U
// test's worked out from the iterations' own throughputs.
func TestRunTradeoffIterated(t *testing.T) {
	txt := filepath.Join(t.TempDir(), "t.txt")
	code, out, errOut := execute(t, context.Background(), "run", "--tradeoff", "--iterations", "4,4", "-l", "0.3", "-i", "0", "--json", "-o", txt)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Runs []struct {
			Summary struct {
				BPS float64 `json:"throughput_bps"`
			} `json:"summary"`
			Iterations []struct {
				BPS float64 `json:"throughput_bps"`
			} `json:"iterations"`
		} `json:"runs"`
		Tradeoff *struct {
			Ratio float64 `json:"ratio"`
			Test  *struct {
				NA          int     `json:"n_a"`
				NB          int     `json:"n_b"`
				P           float64 `json:"p"`
				Alpha       float64 `json:"alpha"`
				Significant bool    `json:"significant"`
			} `json:"test"`
		} `json:"tradeoff"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(doc.Runs) != 2 || doc.Tradeoff == nil || doc.Tradeoff.Test == nil {
		t.Fatalf("no tested tradeoff in:\n%s", out)
	}
	var samples [2][]float64
	for i, r := range doc.Runs {
		for _, it := range r.Iterations {
			samples[i] = append(samples[i], it.BPS)
		}
	}
	tt := doc.Tradeoff.Test
	if tt.NA != 4 || tt.NB != 4 || len(samples[0]) != 4 || len(samples[1]) != 4 {
		t.Fatalf("tested %d+%d iterations, the runs have %d+%d; want 4+4", tt.NA, tt.NB, len(samples[0]), len(samples[1]))
	}
	wantP := exactUP(samples[0], samples[1])
	if math.Abs(tt.P-wantP) > 1e-9 || tt.Alpha != 0.05 || tt.Significant != (wantP <= 0.05) {
		t.Errorf("test p %v alpha %v significant %v; from the iterations %v and %v, p is %v", tt.P, tt.Alpha, tt.Significant, samples[0], samples[1], wantP)
	}
	if want := doc.Runs[1].Summary.BPS / doc.Runs[0].Summary.BPS; math.Abs(doc.Tradeoff.Ratio-want) > 1e-9*want {
		t.Errorf("ratio %v, want %v", doc.Tradeoff.Ratio, want)
	}
	b, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	verdict := "not significant"
	if tt.Significant {
		verdict = "significant"
	}
	line := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "TCP_MAERTS / TCP_STREAM = ") {
			line = l
		}
	}
	want := fmt.Sprintf("(p=%.3f, n=4+4, mann-whitney-u: %s at alpha 0.05)", wantP, verdict)
	if !strings.Contains(line, want) {
		t.Errorf("text ratio line %q: want %q", line, want)
	}
}
