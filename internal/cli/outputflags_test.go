package cli

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"wirespeed/internal/result"
)

// TestFormatUnits: -f changes the units of the table and the interval
// lines, not the document: the table's throughput is the document's
// bits/s divided by 8*1024*1024 for -f M and by 10^9 for -f g, and each
// interval line's bitrate the interval's, in the same unit.
func TestFormatUnits(t *testing.T) {
	for _, tc := range []struct {
		unit, column, line string
		div                float64
	}{
		{"M", "MBytes/sec", "MBytes/sec", 8 * 1024 * 1024},
		{"g", "10^9bits/sec", "Gbits/sec", 1e9},
		{"k", "10^3bits/sec", "Kbits/sec", 1e3},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "r.json")
			code, out, errOut := execute(t, context.Background(), "run", "-l", "0.4", "-i", "0.2", "--cpu=false", "-f", tc.unit, "-o", file)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			doc, err := result.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`secs\.\s+` + regexp.QuoteMeta(tc.column)).MatchString(out) {
				t.Errorf("table heading lacks %s:\n%s", tc.column, out)
			}
			m := regexp.MustCompile(`(?m)^\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+client->server$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no table row:\n%s", out)
			}
			got, _ := strconv.ParseFloat(m[1], 64)
			want := doc.Summary.BitsPerSecond / tc.div
			if math.Abs(got-want) > 0.006 {
				t.Errorf("table shows %v %s, the document's %v bits/s is %v", got, tc.column, doc.Summary.BitsPerSecond, want)
			}
			lines := regexp.MustCompile(`(?m)^\[  1\] client->server .* sec .*  ([\d.]+) `+regexp.QuoteMeta(tc.line)+`  retr`).FindAllStringSubmatch(out, -1)
			if len(lines) == 0 || len(lines) != len(doc.Intervals) {
				t.Fatalf("%d interval lines in %s for %d intervals:\n%s", len(lines), tc.line, len(doc.Intervals), out)
			}
			for i, l := range lines {
				got, _ := strconv.ParseFloat(l[1], 64)
				want := doc.Intervals[i].BitsPerSecond / tc.div
				if math.Abs(got-want) > 0.01*want+0.006 { // three significant digits
					t.Errorf("interval %d shows %v %s, the document's is %v", i, got, tc.line, want)
				}
			}
		})
	}
	if code, _, errOut := execute(t, context.Background(), "run", "-f", "x"); code != ExitUsage || !regexp.MustCompile(`format "x"`).MatchString(errOut) {
		t.Errorf("-f x: exit %d, %q", code, errOut)
	}
}
