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
