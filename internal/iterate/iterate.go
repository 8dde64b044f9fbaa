// Package iterate owns the repetition of a measurement: it runs a
// measurement as a spec.Repeat asks (netperf's -i MAX,MIN with
// -I LEVEL,WIDTH), asks stats.Decide after each iteration whether every
// figure's confidence interval is narrow enough, and makes the mean result
// (result.Mean) with its confidence and every iteration.
//
// It does no I/O of its own: the measurement is a function, so that the
// client runs it over its control connection (client.Client.Iterate), a
// relayed pair of a mesh over a relay, run --iperf3 over iperf3's
// protocol, and a test over fake sequences of results.
package iterate

import (
	"context"
	"fmt"
	"math"
	"strings"

	"wirespeed/internal/limit"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// Event is what Run reports as it goes: an iteration
// starting (Done false), or one ending with its result and, once there
// are enough iterations for one, the confidence interval so far.
type Event struct {
	// Iteration is 1-based.
	Iteration int
	// Max is the most iterations that may run.
	Max  int
	Done bool
	// Result is the iteration's own result, when Done.
	Result result.Result
	// Confidence is the interval over the iterations so far, when Done.
	Confidence *result.Confidence
	// Stop is true when this was the last iteration.
	Stop bool
}

// Run repeats once as rep asks and returns the result of the
// repeated measurement: with one iteration at most, once's result as it
// is; otherwise result.Mean of the iterations, with every iteration in
// Iterations and the confidence interval in Summary.Confidence.
//
// The stopping rule is stats.Decide for each figure measured:
// throughput, and the CPU utilization of each side that reported it, as
// netperf checks its throughput and CPU intervals together. Iterating
// stops when every figure's interval is within rep's width (after the
// minimum), or at the maximum; a warning then names each figure that did
// not reach it and how wide it was.
//
// An interrupted iteration (ctx cancelled) ends the loop: it is listed in
// Iterations but left out of the mean, unless it is the only one, and the
// result is marked interrupted. A run that fails with an error ends the
// loop too; the error is returned beside the iterations completed so far
// (or beside the failed run's partial result when there were none).
// progress may be nil.
func Run(ctx context.Context, rep spec.Repeat, once func(context.Context) (result.Result, error), progress func(Event)) (result.Result, error) {
	if err := rep.Validate(); err != nil {
		return result.Result{}, err
	}
	emit := func(ev Event) {
		if progress != nil {
			progress(ev)
		}
	}
	if !rep.Repeats() {
		emit(Event{Iteration: 1, Max: 1})
		res, err := once(ctx)
		emit(Event{Iteration: 1, Max: 1, Done: true, Result: res, Stop: true})
		return res, err
	}
	var (
		all      []result.Result // every iteration, interrupted ones too
		complete []result.Result // the ones the statistics are over
		conf     *result.Confidence
		warnings []string
		runErr   error
	)
	for i := 1; i <= rep.MaxIterations; i++ {
		emit(Event{Iteration: i, Max: rep.MaxIterations})
		res, err := once(ctx)
		if err != nil && len(res.Directions) == 0 {
			if len(all) == 0 {
				return res, err
			}
			runErr = fmt.Errorf("iteration %d: %w", i, err)
			break
		}
		all = append(all, res)
		if err != nil || res.Interrupted || ctx.Err() != nil {
			runErr = err
			if runErr != nil {
				runErr = fmt.Errorf("iteration %d: %w", i, err)
			}
			emit(Event{Iteration: i, Max: rep.MaxIterations, Done: true, Result: res, Confidence: conf, Stop: true})
			break
		}
		complete = append(complete, res)
		var stop bool
		conf, stop, warnings, err = decide(rep, complete)
		if err != nil {
			// Only a NaN or infinite figure gets here: report it, keep
			// what was measured.
			runErr = err
			stop = true
		}
		emit(Event{Iteration: i, Max: rep.MaxIterations, Done: true, Result: res, Confidence: conf, Stop: stop})
		if stop {
			break
		}
	}
	over := complete
	if len(over) == 0 {
		over = all
	}
	out := result.Mean(over)
	limit.OfMean(&out, over)
	for i, r := range all {
		out.Iterations = append(out.Iterations, result.IterationOf(i+1, r))
		if r.Interrupted {
			out.Interrupted = true
		}
	}
	// The last iteration's warnings are about that run; the mean's are
	// every iteration's, each said once, and the statistics'.
	out.Warnings = nil
	seen := map[string]bool{}
	for _, r := range all {
		for _, w := range r.Warnings {
			if k := w.Key(); !seen[k] {
				seen[k] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	for _, w := range warnings {
		out.Warnings = append(out.Warnings, result.Words(w))
	}
	if conf == nil {
		conf = &result.Confidence{Level: rep.ConfidenceLevel, WidthPct: rep.ConfidenceWidthPct, Iterations: len(over)}
	}
	if out.Interrupted || runErr != nil {
		conf.Stop = spec.ReasonInterrupted
	}
	out.Summary.Confidence = conf
	return out, runErr
}

// decide computes the confidence interval of every figure over rs and
// whether to stop: when every figure's decision is to stop, which below
// the maximum means every interval was reached.
func decide(rep spec.Repeat, rs []result.Result) (*result.Confidence, bool, []string, error) {
	conf := &result.Confidence{Level: rep.ConfidenceLevel, WidthPct: rep.ConfidenceWidthPct, Iterations: len(rs), Stop: spec.ReasonReached}
	tput := make([]float64, len(rs))
	var local, remote []float64
	for i, r := range rs {
		tput[i] = r.Summary.BitsPerSecond
		if c := r.Summary.LocalCPU; c != nil {
			local = append(local, c.UtilPct)
		}
		if c := r.Summary.RemoteCPU; c != nil {
			remote = append(remote, c.UtilPct)
		}
	}
	stop := true
	var (
		warnings []string                // in order of first appearance
		names    = map[string][]string{} // the figures that gave each
	)
	figure := func(name string, values []float64) (*result.FigureConfidence, error) {
		d, err := stats.Decide(rep, values)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		stop = stop && d.Stop
		if d.Reason == spec.ReasonMaxHit {
			conf.Stop = spec.ReasonMaxHit
		}
		if d.Stop {
			// Caveats are worth saying once, with the final figures.
			for _, w := range d.Summary.Warnings {
				if names[w] == nil {
					warnings = append(warnings, w)
				}
				names[w] = append(names[w], name)
			}
		}
		return figureConfidence(d.Summary, rep.ConfidenceWidthPct), nil
	}
	f, err := figure("throughput", tput)
	if err != nil {
		return nil, false, nil, err
	}
	conf.FigureConfidence = *f
	// A side's CPU counts only when every iteration has it.
	if len(local) == len(rs) {
		if conf.LocalCPU, err = figure("local CPU utilization", local); err != nil {
			return nil, false, nil, err
		}
	}
	if len(remote) == len(rs) {
		if conf.RemoteCPU, err = figure("remote CPU utilization", remote); err != nil {
			return nil, false, nil, err
		}
	}
	if !stop {
		conf.Stop = ""
		return conf, false, nil, nil
	}
	// A caveat every figure shares ("only 2 iterations") is said once.
	figures := 1
	if conf.LocalCPU != nil {
		figures++
	}
	if conf.RemoteCPU != nil {
		figures++
	}
	out := make([]string, 0, len(warnings))
	for _, w := range warnings {
		if len(names[w]) == figures && figures > 1 {
			out = append(out, w)
			continue
		}
		out = append(out, strings.Join(names[w], ", ")+": "+w)
	}
	return conf, true, out, nil
}

// figureConfidence turns a stats.Summary into what the document keeps,
// leaving out every value JSON cannot carry.
func figureConfidence(s stats.Summary, widthPct float64) *result.FigureConfidence {
	f := &result.FigureConfidence{}
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	if s.Computable() {
		f.AchievedPct = finite(s.WidthPct)
		f.Lo, f.Hi = finite(s.Lo), finite(s.Hi)
	}
	f.Reached = f.AchievedPct != nil && s.Within(widthPct)
	return f
}
