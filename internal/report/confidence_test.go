package report

import (
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

func TestIterationLine(t *testing.T) {
	achieved := 2.4
	tests := []struct {
		name string
		res  result.Result
		conf *result.Confidence
		want string
	}{
		{
			name: "first",
			res:  result.Result{Summary: result.Summary{BitsPerSecond: 9_341_220_000}},
			want: "iteration 1 of at most 10: 9341.22 10^6bits/sec",
		},
		{
			name: "cpu and interval",
			res: result.Result{Summary: result.Summary{
				BitsPerSecond: 1_500_000,
				LocalCPU:      &measure.CPU{UtilPct: 48.12},
				RemoteCPU:     &measure.CPU{UtilPct: 51},
			}},
			conf: &result.Confidence{Level: 0.99, FigureConfidence: result.FigureConfidence{AchievedPct: &achieved}},
			want: "iteration 1 of at most 10: 1.50 10^6bits/sec, CPU 48.1% local, 51.0% remote; so far +/-1.2% @ 99% conf.",
		},
		{
			name: "no interval yet, interrupted",
			res:  result.Result{Summary: result.Summary{BitsPerSecond: 2e6}, Interrupted: true},
			conf: &result.Confidence{Level: 0.99},
			want: "iteration 1 of at most 10: 2.00 10^6bits/sec (interrupted)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IterationLine(1, 10, tt.res, tt.conf); got != tt.want {
				t.Errorf("IterationLine:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	// The progress of a sweep or matrix leaves the CPU to the row.
	if got, want := IterationProgress(1, 10, tests[1].res, tests[1].conf), "iteration 1 of at most 10: 1.50 10^6bits/sec; so far +/-1.2% @ 99% conf."; got != want {
		t.Errorf("IterationProgress:\n got %q\nwant %q", got, want)
	}
}
