package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestIntervalOrIterations: -i is iperf's interval unless its value holds
// a comma, which makes it netperf's MAX,MIN iterations.
func TestIntervalOrIterations(t *testing.T) {
	tests := []struct {
		args           []string
		wantInterval   string
		wantIterations string
		wantErr        string
	}{
		{args: nil, wantInterval: "1s", wantIterations: ""},
		{args: []string{"-i", "1"}, wantInterval: "1s", wantIterations: ""},
		{args: []string{"-i", "10"}, wantInterval: "10s", wantIterations: ""},
		{args: []string{"-i", "250ms"}, wantInterval: "250ms", wantIterations: ""},
		{args: []string{"-i", "10,3"}, wantInterval: "1s", wantIterations: "10,3"},
		{args: []string{"-i", "0.5", "-i", "6,2"}, wantInterval: "500ms", wantIterations: "6,2"},
		{args: []string{"--iterations", "5"}, wantInterval: "1s", wantIterations: "5,3"},
		{args: []string{"--iterations", "2"}, wantInterval: "1s", wantIterations: "2,2"},
		{args: []string{"--iterations", "8,8"}, wantInterval: "1s", wantIterations: "8,8"},
		{args: []string{"-i", "3,5"}, wantErr: "netperf's order is MAX,MIN"},
		{args: []string{"-i", "a,b"}, wantErr: "MAX and MIN"},
		{args: []string{"-i", "1,2,3"}, wantErr: "MAX,MIN"},
		{args: []string{"-I", "0.99,5"}, wantErr: "percentage"},
		{args: []string{"-I", "99,0"}, wantErr: "width"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := newRunCmd(&env{stdout: io.Discard, stderr: io.Discard})
			err := cmd.ParseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cmd.Flags().Lookup("interval").Value.String(); got != tt.wantInterval {
				t.Errorf("interval %s, want %s", got, tt.wantInterval)
			}
			if got := cmd.Flags().Lookup("iterations").Value.String(); got != tt.wantIterations {
				t.Errorf("iterations %q, want %q", got, tt.wantIterations)
			}
		})
	}
}

func TestRepeatDefaults(t *testing.T) {
	tests := []struct {
		args            []string
		max, min        int
		level, widthPct float64
		wantErr         string
	}{
		{args: nil, max: 1, min: 1, level: 0.99, widthPct: 5},
		{args: []string{"-I", "99,5"}, max: 10, min: 3, level: 0.99, widthPct: 5},
		{args: []string{"-I", "95"}, max: 10, min: 3, level: 0.95, widthPct: 5},
		{args: []string{"-I", "95,10", "-i", "20,5"}, max: 20, min: 5, level: 0.95, widthPct: 10},
		{args: []string{"-i", "4,2"}, max: 4, min: 2, level: 0.99, widthPct: 5},
		{args: []string{"-I", "99,5", "--iterations", "1"}, wantErr: "at least 2 iterations"},
		{args: []string{"--iterations", "5000"}, wantErr: "limit"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := &runFlags{}
			cmd := newRunCmd(&env{stdout: io.Discard, stderr: io.Discard})
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			f.measure.iterations = *cmd.Flags().Lookup("iterations").Value.(*iterationsValue)
			f.measure.confidence = *cmd.Flags().Lookup("confidence").Value.(*confidenceValue)
			r, err := f.measure.repeat()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.MaxIterations != tt.max || r.MinIterations != tt.min || r.ConfidenceLevel != tt.level || r.ConfidenceWidthPct != tt.widthPct {
				t.Errorf("repeat %+v", r)
			}
		})
	}
}

// TestRunIterations: run -i MAX,MIN repeats the run and the document keeps
// every iteration, the confidence and what was asked.
func TestRunIterations(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.15", "-i", "2,2", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Repeat struct {
			Max int `json:"max_iterations"`
		}
		Summary struct {
			Throughput float64 `json:"throughput_bps"`
			LocalCPU   *struct {
				Util float64 `json:"util_pct"`
			} `json:"local_cpu"`
			Confidence *struct {
				Level       float64  `json:"level"`
				Iterations  int      `json:"iterations"`
				AchievedPct *float64 `json:"achieved_pct"`
			}
		}
		Iterations []struct {
			Throughput float64 `json:"throughput_bps"`
			LocalCPU   *struct {
				Util float64 `json:"util_pct"`
			} `json:"local_cpu"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Repeat.Max != 2 || len(doc.Iterations) != 2 || doc.Summary.Confidence == nil || doc.Summary.Confidence.Iterations != 2 {
		t.Fatalf("document: %s", out)
	}
	mean := (doc.Iterations[0].Throughput + doc.Iterations[1].Throughput) / 2
	if d := doc.Summary.Throughput - mean; d > 1e-6*mean || d < -1e-6*mean {
		t.Errorf("summary throughput %v is not the mean of the iterations' (%v)", doc.Summary.Throughput, mean)
	}
	if doc.Summary.LocalCPU == nil || doc.Iterations[0].LocalCPU == nil {
		t.Errorf("CPU is on by default for run: %s", out)
	}
}
