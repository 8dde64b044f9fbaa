package cli

import (
	"fmt"
	"io"
	"sync"

	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
)

// iterationLines returns what `wirespeed run` shows between iterations in
// text mode: a line as each iteration starts (after the first) and one
// with its throughput and the interval so far as it ends. resetHeader is
// called, under mu, before an iteration's interval lines so that they get
// their own header. It returns nil when show is false.
func iterationLines(w io.Writer, show bool, mu *sync.Mutex, resetHeader func()) func(iterate.Event) {
	if !show {
		return nil
	}
	return func(ev iterate.Event) {
		mu.Lock()
		defer mu.Unlock()
		if !ev.Done {
			if ev.Iteration > 1 {
				fmt.Fprintln(w)
			}
			resetHeader()
			return
		}
		for _, l := range report.FitClauses(report.IterationLine(ev.Iteration, ev.Max, ev.Result, ev.Confidence)) {
			fmt.Fprintln(w, l)
		}
	}
}
