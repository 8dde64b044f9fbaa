package cli

import (
	"fmt"
	"io"
	"sync"

	"wirespeed/internal/client"
	"wirespeed/internal/report"
	"wirespeed/internal/units"
)

// iterationLines returns what `wirespeed run` shows between iterations in
// text mode: a line as each iteration starts (after the first) and one
// with its throughput and the interval so far as it ends. resetHeader is
// called, under mu, before an iteration's interval lines so that they get
// their own header. It returns nil when show is false.
func iterationLines(w io.Writer, show bool, mu *sync.Mutex, resetHeader func()) func(client.IterationEvent) {
	if !show {
		return nil
	}
	return func(ev client.IterationEvent) {
		mu.Lock()
		defer mu.Unlock()
		if !ev.Done {
			if ev.Iteration > 1 {
				fmt.Fprintln(w)
			}
			resetHeader()
			return
		}
		fmt.Fprintf(w, "iteration %d (of at most %d): %.2f 10^6bits/sec", ev.Iteration, ev.Max, units.Mega(ev.Result.Summary.BitsPerSecond))
		if c := ev.Result.Summary.LocalCPU; c != nil {
			fmt.Fprintf(w, ", local CPU %.1f%%", c.UtilPct)
		}
		if c := ev.Result.Summary.RemoteCPU; c != nil {
			fmt.Fprintf(w, ", remote CPU %.1f%%", c.UtilPct)
		}
		if c := ev.Confidence; c != nil && c.AchievedPct != nil {
			fmt.Fprintf(w, "; so far %s", report.PlusMinus(c.FigureConfidence, c.Level))
		}
		if ev.Result.Interrupted {
			fmt.Fprint(w, " (interrupted)")
		}
		fmt.Fprintln(w)
	}
}
