package client

import (
	"context"

	"wirespeed/internal/comparison"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Measure measures one test, with whatever iterations and progress its
// maker chose: Client.Iterate over one connection, or an iperf3 run.
type Measure func(ctx context.Context, t spec.Test) (result.Result, error)

// RunObserver is told as Runs goes, from Runs' goroutine.
type RunObserver interface {
	// Starting is called before run i (from 0) measures t.
	Starting(i int, t spec.Test)
	// Measured is called with what run i measured, partial results of a
	// failed or interrupted run too.
	Measured(i int, r result.Result)
}

// Runs measures t or, with tradeoff, TCP_STREAM and then TCP_MAERTS with
// t's other settings (run --tradeoff), and puts what was measured into
// doc: the first run's result at the top level and, for two, both in
// Runs with their comparison in Tradeoff. It stops after a run that
// fails or is interrupted and returns the failed run's error; doc keeps
// what was measured before (doc.Kind() is result.KindEmpty when nothing
// was); the results it returns are those doc holds. obs may be nil.
func Runs(ctx context.Context, measure Measure, t spec.Test, tradeoff bool, doc *result.Document, obs RunObserver) ([]result.Result, error) {
	kinds := []spec.Kind{t.Kind}
	if tradeoff {
		kinds = []spec.Kind{spec.TCPStream, spec.TCPMaerts}
	}
	var results []result.Result
	var runErr error
	for i, k := range kinds {
		tk := t
		tk.Kind = k
		if obs != nil {
			obs.Starting(i, tk)
		}
		res, err := measure(ctx, tk)
		if err != nil && len(res.Directions) == 0 {
			runErr = err
			break
		}
		results = append(results, res)
		if obs != nil {
			obs.Measured(i, res)
		}
		if err != nil {
			runErr = err
			break
		}
		if res.Interrupted {
			break
		}
	}
	if len(results) > 0 {
		doc.Result = results[0]
	}
	if len(results) > 1 {
		doc.Runs = results
	}
	if len(results) == 2 {
		trade := comparison.Tradeoff(results[0], results[1])
		doc.Tradeoff = &trade
	}
	return results, runErr
}
