package client

import (
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// fillIntervals puts the server's interval reports, kept as they came
// (each direction's in order, checked by intervalGuard), into its result,
// which leaves them out when the client asked for streamed intervals
// (control.TestRequest.StreamedIntervals): the flow's intervals are the
// reports' sums, each stream's its own share. A flow that carries
// intervals of its own (a server that keeps them) is left as it is.
func fillIntervals(r *result.SideResult, reports map[spec.Direction][]result.IntervalReport) {
	for i := range r.Flows {
		f := &r.Flows[i]
		reps := reports[f.Direction]
		if len(f.Intervals) > 0 || len(reps) == 0 {
			continue
		}
		f.Intervals = make([]result.Interval, 0, len(reps))
		byID := map[int]int{}
		for j, s := range f.Streams {
			byID[s.ID] = j
			f.Streams[j].Intervals = make([]result.Interval, 0, len(reps))
		}
		for _, rep := range reps {
			f.Intervals = append(f.Intervals, rep.Interval)
			for _, si := range rep.Streams {
				if j, ok := byID[si.ID]; ok {
					f.Streams[j].Intervals = append(f.Streams[j].Intervals, si.Interval)
				}
			}
		}
	}
}
