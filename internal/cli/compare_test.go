package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wirespeed/internal/report"
	"wirespeed/internal/testkit"
)

// The fixtures testdata/compare/base.json and jumbo.json are two sweeps of
// a lab pair at MTU 1500 and 9000, four iterations a point; the values are
// chosen so that the tests' answers are known by hand (see
// internal/comparison's tests for the arithmetic): fully separated
// samples of 4 and 4 give the U test's smallest p, 2/70 = 0.029
// (significant); interleaved ones (ranks 1 3 5 7 of 8) give 48/70 = 0.686.
func TestCompareGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"compare-u", []string{"compare", "testdata/compare/base.json", "testdata/compare/jumbo.json"}},
		{"compare-welch", []string{"compare", "--test", "welch", "--alpha", "0.01", "testdata/compare/base.json", "testdata/compare/jumbo.json"}},
		{"compare-three", []string{"compare", "testdata/compare/base.json", "testdata/compare/jumbo.json", "testdata/compare/base.json"}},
		{"compare-holm", []string{"compare", "--adjust", "holm", "testdata/compare/base.json", "testdata/compare/jumbo.json"}},
		{"compare-none", []string{"compare", "--adjust", "none", "testdata/compare/base.json", "testdata/compare/jumbo.json"}},
		// maerts.json is jumbo.json measured the other way (its tests
		// TCP_MAERTS): matched across directions, with the same figures.
		{"compare-directions", []string{"compare", "testdata/compare/base.json", "testdata/compare/maerts.json"}},
		// Every pair: base with jumbo, base with maerts (across
		// directions), jumbo with maerts (the same figures: nothing
		// differs), p adjusted over all three pairs' 42 comparisons.
		{"compare-pairs", []string{"compare", "--pairs", "testdata/compare/base.json", "testdata/compare/jumbo.json", "testdata/compare/maerts.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runMain(t, tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			testkit.Golden(t, filepath.Join("compare", tc.name+".txt.golden"), out)
			testkit.CheckWidth(t, tc.name, out, report.Width)
		})
	}
}

func TestCompareJSON(t *testing.T) {
	code, out, stderr := runMain(t, "compare", "--json", "testdata/compare/base.json", "testdata/compare/jumbo.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Schema      string
		Test        string
		Adjustment  string
		Comparisons int
		Figures     []struct {
			Figure string
			Points []struct {
				Size     string
				Compared []struct {
					P           float64
					PAdjusted   float64 `json:"p_adjusted"`
					Significant bool
					Verdict     string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Schema != "wirespeed/compare/v1" || doc.Test != "mann-whitney-u" || doc.Figures[0].Figure != "throughput_bps" {
		t.Fatalf("document %+v", doc)
	}
	p := doc.Figures[0].Points[1].Compared[0]
	// Fourteen comparisons: five figures and the two sides' system CPU
	// (the fixtures' only CPU state; user, irq and softirq are 0
	// throughout and not compared) at two sizes. Eight of them at 2/70:
	// Benjamini-Hochberg makes them 14/8 * 2/70 = 0.05, just significant,
	// the test's own p kept beside it.
	if doc.Adjustment != "benjamini-hochberg" || doc.Comparisons != 14 || len(doc.Figures) != 7 {
		t.Errorf("adjustment %q over %d comparisons of %d figures, want benjamini-hochberg over 14 of 7", doc.Adjustment, doc.Comparisons, len(doc.Figures))
	}
	if doc.Figures[0].Points[1].Size != "131072" || !p.Significant || p.Verdict != "+" || p.P > 0.0286 || p.P < 0.0285 || math.Abs(p.PAdjusted-0.05) > 1e-9 {
		t.Errorf("throughput at 131072: %+v", p)
	}
}

func TestCompareErrors(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{"compare"}, ExitUsage, "needs results documents"},
		{[]string{"compare", "testdata/compare/base.json"}, ExitUsage, "two results documents or more"},
		{[]string{"compare", "--test", "chi2", "a", "b"}, ExitUsage, "--test"},
		{[]string{"compare", "--alpha", "5", "a", "b"}, ExitUsage, "--alpha"},
		{[]string{"compare", "--adjust", "bonferroni", "a", "b"}, ExitUsage, "--adjust"},
		{[]string{"compare", "testdata/compare/base.json", "testdata/nonesuch.json"}, ExitRuntime, "nonesuch.json"},
	} {
		code, _, stderr := runMain(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.inStderr)
		}
	}
}

// TestCompareEscapesDocumentText: a results document may come from
// anyone; the strings compare prints from it reach the terminal with
// their control characters escaped.
func TestCompareEscapesDocumentText(t *testing.T) {
	b, err := os.ReadFile("testdata/compare/base.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	const hostile = "6.8\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\r\nroot@host:~# "
	doc["remote"].(map[string]any)["env"].(map[string]any)["kernel_release"] = hostile
	for _, p := range doc["points"].([]any) {
		if r, ok := p.(map[string]any)["remote"].(map[string]any); ok && r["env"] != nil {
			r["env"].(map[string]any)["kernel_release"] = hostile
		}
	}
	b, _ = json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runMain(t, "compare", "testdata/compare/base.json", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `6.8\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\r\nroot@host:~#`) {
		t.Errorf("the kernel release is not shown escaped:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("control characters reached the output:\n%q", out)
	}
}

// TestComparePairsJSON: --pairs --json is an array of one comparison per
// pair, each adjusted over the whole family: three pairs of 14
// comparisons, 42. The 16 at 2/70 (base against jumbo and against
// maerts, 8 each) are adjusted by Benjamini-Hochberg to 42/16 * 2/70 =
// 0.075: no longer significant at 0.05, as over one pair's 14 (0.05).
func TestComparePairsJSON(t *testing.T) {
	code, out, stderr := runMain(t, "compare", "--pairs", "--json", "testdata/compare/base.json", "testdata/compare/jumbo.json", "testdata/compare/maerts.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var docs []struct {
		Comparisons int
		Figures     []struct {
			Points []struct {
				Compared []struct {
					P           float64
					PAdjusted   float64 `json:"p_adjusted"`
					Significant bool
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(docs) != 3 {
		t.Fatalf("%d comparisons, want 3 pairs", len(docs))
	}
	for i, d := range docs {
		if d.Comparisons != 42 {
			t.Errorf("pair %d adjusted over %d comparisons, want 42", i+1, d.Comparisons)
		}
	}
	p := docs[0].Figures[0].Points[1].Compared[0]
	if p.Significant || math.Abs(p.PAdjusted-0.075) > 1e-9 {
		t.Errorf("base against jumbo, throughput at 131072: %+v, want p 2/70 adjusted to 0.075", p)
	}
}

// TestCompareVerdictFirst: compare leads with its answer (issue 48,
// item 6). By hand from the fixtures (four iterations a point, medians):
// throughput at 131072 is 9000 9100 9200 9300 in base.json, median 9150,
// and 9600 9700 9800 9900 in jumbo.json, median 9750: +600/9150 =
// +6.56%; the samples are fully separated, p = 2/70, and eight of the 14
// comparisons are, so Benjamini-Hochberg makes them 14/8 * 2/70 = 0.050.
// Local CPU at 1460: 80 81 82 83 against 70 71 72 73, 81.5 -> 71.5,
// -10/81.5 = -12.27%; at 131072 70..73 against 60..63, 71.5 -> 61.5,
// -13.99%. Throughput at 1460 (3100 3300 3200 3000 against 3150 3050
// 3250 3350, interleaved) is not in the verdict: 14 - 8 = 6 others.
// Over three pairs (42 comparisons) the same 2/70 becomes 0.075, and no
// pair has a significant change.
func TestCompareVerdictFirst(t *testing.T) {
	code, out, stderr := runMain(t, "compare", "testdata/compare/base.json", "testdata/compare/jumbo.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 11 {
		t.Fatalf("output too short:\n%s", out)
	}
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	want := []string{
		"changed significantly from base.json (p BH <= 0.05):",
		"throughput (10^6bits/sec) TCP_STREAM 131072 9150.00 -> 9750.00 +6.56% p=0.050",
		"local CPU util (%) TCP_STREAM 1460 81.50 -> 71.50 -12.27% p=0.050",
		"local CPU util (%) TCP_STREAM 131072 71.50 -> 61.50 -13.99% p=0.050",
	}
	for i, w := range want {
		if got := fields(lines[i]); got != w {
			t.Errorf("line %d: %q, want %q", i+1, got, w)
		}
	}
	if got := fields(lines[9]); got != "6 other comparisons did not change significantly" {
		t.Errorf("line 10: %q, want the 6 others not significant\n%s", got, out)
	}
	if strings.Contains(strings.Join(lines[:10], "\n"), "TCP_STREAM 1460 3200.00") {
		t.Errorf("throughput at 1460 (not significant) is in the verdict:\n%s", out)
	}
	if lines[10] != "" || !strings.HasPrefix(lines[11], "baseline base.json") {
		t.Errorf("the verdict is not followed by a blank line and the comparison's heading:\n%s", out)
	}

	code, out, stderr = runMain(t, "compare", "--pairs", "testdata/compare/base.json", "testdata/compare/jumbo.json", "testdata/compare/maerts.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines = strings.Split(out, "\n")
	if got := lines[1]; got != "no significant change from base.json in 14 comparisons (p BH <= 0.05)" {
		t.Errorf("--pairs, first pair's verdict %q, want none of 14 significant\n%s", got, out)
	}
}

// TestCompareShowsRates: figures whose shown unit only respells theirs
// (trans/sec, pkts/sec: no scale) are shown at their value, not
// multiplied by a missing scale of 0. ../report/testdata/rr.json's
// transactions_per_s is 190756.12286654397: 190756.12 on both sides of
// its comparison with itself, in the table.
func TestCompareShowsRates(t *testing.T) {
	code, out, stderr := runMain(t, "compare", "../report/testdata/rr.json", "../report/testdata/rr.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "TCP_RR 1,1") {
			line = strings.Join(strings.Fields(l), " ")
		}
	}
	if !strings.HasPrefix(line, "TCP_RR 1,1 190756.12 190756.12 +0.00%") {
		t.Errorf("transaction rate line %q, want 190756.12 on both sides\n%s", line, out)
	}
	if !strings.Contains(out, "no significant change from ../report/testdata/rr.json in its 1 comparison (p BH <= 0.05)") {
		t.Errorf("no verdict for the one comparison:\n%s", out)
	}
}
