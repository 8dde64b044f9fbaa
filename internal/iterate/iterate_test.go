package iterate_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/iterate"
	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// fake returns a run function that hands out results with the given
// throughputs (bits/s) and local CPU utilizations (nil: no CPU), one per
// call, and counts the calls.
func fake(tput []float64, cpu []float64, calls *int) func(context.Context) (result.Result, error) {
	return func(ctx context.Context) (result.Result, error) {
		i := *calls
		*calls++
		if i >= len(tput) {
			return result.Result{}, errors.New("fake: no more results")
		}
		s := result.Summary{BitsPerSecond: tput[i], Bytes: int64(tput[i] / 8), ElapsedS: 1}
		if cpu != nil {
			s.LocalCPU = &measure.CPU{UtilPct: cpu[i], CPUs: 2, ElapsedS: 1, BusiestCPU: -1}
		}
		return result.Result{
			Started:    time.Unix(int64(1000+i), 0),
			Summary:    s,
			Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}},
		}, nil
	}
}

func repeat(max, min int, width float64) spec.Repeat {
	return spec.Repeat{MaxIterations: max, MinIterations: min, ConfidenceLevel: 0.99, ConfidenceWidthPct: width}
}

func TestIterateReaches(t *testing.T) {
	calls := 0
	// Tight values: after the minimum of 3 the interval is narrow enough.
	res, err := iterate.Run(context.Background(), repeat(10, 3, 5), fake([]float64{100, 100.2, 100.1, 999, 999}, nil, &calls), nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(res.Iterations) != 3 {
		t.Fatalf("ran %d iterations (%d kept), want 3", calls, len(res.Iterations))
	}
	c := res.Summary.Confidence
	if c == nil || !c.Reached || c.Stop != "reached" || c.Iterations != 3 || c.Level != 0.99 || c.WidthPct != 5 {
		t.Fatalf("confidence %+v", c)
	}
	if math.Abs(res.Summary.BitsPerSecond-100.1) > 1e-9 || res.Directions[0].Summary.BitsPerSecond != res.Summary.BitsPerSecond {
		t.Errorf("mean %v (direction %v), want 100.1", res.Summary.BitsPerSecond, res.Directions[0].Summary.BitsPerSecond)
	}
	for i, it := range res.Iterations {
		if it.Index != i+1 || it.BitsPerSecond != []float64{100, 100.2, 100.1}[i] {
			t.Errorf("iteration %d: %+v", i, it)
		}
	}
}

// TestIterateHandComputed: 100, 102, 104 have mean 102 and standard
// deviation 2; t(0.995, 2 df) = 9.924843, so the 99% interval is
// 102 +/- 9.924843*2/sqrt(3) = 102 +/- 11.46022, 22.4710% of the mean wide.
func TestIterateHandComputed(t *testing.T) {
	calls := 0
	res, err := iterate.Run(context.Background(), repeat(3, 3, 5), fake([]float64{100, 102, 104}, nil, &calls), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Summary.Confidence
	if c.AchievedPct == nil || c.Lo == nil || c.Hi == nil {
		t.Fatalf("no interval: %+v", c)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-4 }
	if !near(*c.AchievedPct, 22.47102) || !near(*c.Lo, 102-11.46022) || !near(*c.Hi, 102+11.46022) {
		t.Errorf("interval %v [%v, %v], want 22.47102%% [90.53978, 113.46022]", *c.AchievedPct, *c.Lo, *c.Hi)
	}
	if c.Reached || c.Stop != "max_hit" {
		t.Errorf("reached %v stop %q, want not reached at the maximum", c.Reached, c.Stop)
	}
	if !strings.Contains(strings.Join(report.WarningTexts(res.Warnings), "\n"), "not reached in 3 iterations") {
		t.Errorf("warnings %q do not say the interval was not reached", report.WarningTexts(res.Warnings))
	}
}

func TestIterateNotReached(t *testing.T) {
	calls := 0
	var events []iterate.Event
	res, err := iterate.Run(context.Background(), repeat(5, 2, 5),
		fake([]float64{50, 150, 50, 150, 50, 150}, nil, &calls),
		func(ev iterate.Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 5 {
		t.Errorf("ran %d iterations, want the maximum 5", calls)
	}
	c := res.Summary.Confidence
	if c.Reached || c.Stop != "max_hit" || c.Iterations != 5 || c.AchievedPct == nil || *c.AchievedPct < 50 {
		t.Errorf("confidence %+v", c)
	}
	// A start and an end event per iteration, the last one saying stop.
	if len(events) != 10 || !events[9].Stop || events[8].Stop || events[0].Done || !events[1].Done {
		t.Errorf("events %+v", events)
	}
	if events[1].Confidence == nil || events[1].Confidence.AchievedPct != nil {
		t.Errorf("after 1 iteration there is no interval yet: %+v", events[1].Confidence)
	}
}

// TestIterateCPUGates: throughput settles, CPU utilization does not; as in
// netperf, iterating goes on until both are within the width.
func TestIterateCPUGates(t *testing.T) {
	calls := 0
	res, err := iterate.Run(context.Background(), repeat(6, 3, 5),
		fake([]float64{100, 100.2, 100.1, 100, 100.1, 100.2}, []float64{10, 30, 10, 30, 10, 30}, &calls), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Summary.Confidence
	if calls != 6 || !c.Reached || c.LocalCPU == nil || c.LocalCPU.Reached || c.Stop != "max_hit" {
		t.Errorf("calls %d, confidence %+v local %+v", calls, c, c.LocalCPU)
	}
	if got := res.Summary.LocalCPU.UtilPct; got != 20 {
		t.Errorf("mean local utilization %v, want 20", got)
	}
	w := strings.Join(report.WarningTexts(res.Warnings), "\n")
	if !strings.Contains(w, "local CPU utilization: confidence interval not reached") || strings.Contains(w, "throughput: confidence interval not reached") {
		t.Errorf("warnings %q: want the CPU's interval named, not the throughput's", report.WarningTexts(res.Warnings))
	}
}

func TestIterateOnce(t *testing.T) {
	calls := 0
	res, err := iterate.Run(context.Background(), spec.DefaultRepeat(), fake([]float64{100}, nil, &calls), nil)
	if err != nil || calls != 1 || res.Summary.Confidence != nil || res.Iterations != nil {
		t.Errorf("a single run: err %v, calls %d, confidence %v, iterations %v", err, calls, res.Summary.Confidence, res.Iterations)
	}
}

// TestIterateInterrupted: an interrupted iteration is kept in the list,
// left out of the mean, and the document still encodes (no NaN or Inf).
func TestIterateInterrupted(t *testing.T) {
	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner := fake([]float64{100, 40, 100}, []float64{10, 5, 10}, &calls)
	once := func(ctx context.Context) (result.Result, error) {
		r, err := inner(ctx)
		if calls == 2 {
			cancel()
			r.Interrupted = true
		}
		return r, err
	}
	res, err := iterate.Run(ctx, repeat(10, 3, 5), once, nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(res.Iterations) != 2 || !res.Iterations[1].Interrupted || !res.Interrupted {
		t.Fatalf("calls %d iterations %+v interrupted %v", calls, res.Iterations, res.Interrupted)
	}
	if res.Summary.BitsPerSecond != 100 {
		t.Errorf("mean %v includes the interrupted iteration", res.Summary.BitsPerSecond)
	}
	c := res.Summary.Confidence
	if c.Stop != "interrupted" || c.AchievedPct != nil || c.Iterations != 1 {
		t.Errorf("confidence %+v", c)
	}
	b, err := json.Marshal(result.Document{Result: res})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !strings.Contains(string(b), `"achieved_pct":null`) {
		t.Errorf("no interval should encode as null: %s", b)
	}
}

func TestIterateError(t *testing.T) {
	calls := 0
	res, err := iterate.Run(context.Background(), repeat(5, 3, 5), fake([]float64{100, 101}, nil, &calls), nil)
	if err == nil || !strings.Contains(err.Error(), "iteration 3") {
		t.Errorf("err %v, want the failed iteration named", err)
	}
	if len(res.Iterations) != 2 || res.Summary.BitsPerSecond != 100.5 {
		t.Errorf("the completed iterations are lost: %+v", res.Iterations)
	}
	if _, err := iterate.Run(context.Background(), repeat(1, 2, 5), nil, nil); err == nil {
		t.Errorf("MAX < MIN accepted")
	}
}
