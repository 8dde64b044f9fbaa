package result

import (
	"wirespeed/internal/measure"
)

// joinCPU puts each side's CPU figures into the run's summary and computes
// their service demand.
//
// Both sides' service demand is per KB of the test's payload as the
// receiver counted it (Summary.Bytes, both directions added for
// TCP_BIDIR), as netperf divides both sides' CPU by the bytes the receiver
// reported: the CPU a side spent, over its own window, for each KB the
// test moved. The CPU time is the side's utilization times its CPUs times
// the length of its CPU window (CPU.ElapsedS).
func joinCPU(res *Result, local, remote SideResult) {
	for _, s := range []SideResult{local, remote} {
		if s.CPU == nil {
			if res.Spec.CPU {
				why := s.CPUError
				if why == "" {
					why = "none reported (a server older than --cpu, or a window that never opened)"
				}
				res.Warnings = append(res.Warnings, Coded(WarnNoCPUFigures, map[string]string{"side": string(s.Side), "reason": why}, nil))
			}
			continue
		}
		c := *s.CPU
		c.PerCPUUtilPct = append([]float64(nil), c.PerCPUUtilPct...)
		c.PerCPUIDs = append([]int(nil), c.PerCPUIDs...)
		c.ServiceDemandMicrosPerKB = measure.ServiceDemand(c.UtilPct, c.CPUs, c.ElapsedS, res.Summary.Bytes)
		if rr := res.Summary.RRSummary; rr != nil {
			c.ServiceDemandMicrosPerTransaction = measure.ServiceDemandPerTransaction(c.UtilPct, c.CPUs, c.ElapsedS, rr.Transactions)
		}
		if s.Env != nil && s.Env.CPUBaseline != nil {
			b := *s.Env.CPUBaseline
			c.Baseline = &b
		}
		if s.Side == Remote {
			res.Summary.RemoteCPU = &c
		} else {
			res.Summary.LocalCPU = &c
		}
	}
}
