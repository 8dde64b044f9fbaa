package result

import (
	"math"
	"time"
)

// wirespeed verify's record: each figure beside its ground truth
// (internal/verify runs the labs; report writes the table).

// VerifyTolerance bounds a check's error: Low <= error <= High, in percent of
// the truth when Relative, else in the figure's unit.
type VerifyTolerance struct {
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Relative bool    `json:"relative"`
}

// VerifyCheck is one figure beside its truth.
type VerifyCheck struct {
	// Name is the check's short name ("tcp-throughput"), Figure what
	// wirespeed measured and Unit its unit.
	Name   string `json:"name"`
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Measured is wirespeed's figure and Truth the ground truth, with
	// TruthIs saying what the truth is and where it was read.
	Measured float64 `json:"measured"`
	Truth    float64 `json:"truth"`
	TruthIs  string  `json:"truth_is"`
	// Error is Measured - Truth, in Unit; ErrorPct the same in percent
	// of Truth.
	Error     float64         `json:"error"`
	ErrorPct  float64         `json:"error_pct"`
	Tolerance VerifyTolerance `json:"tolerance"`
	// OK is true when the error is within the tolerance. Skipped says
	// why a check did not run (nothing to compare with: irtt not
	// installed), Failed why it could not be measured (the run failed).
	OK      bool   `json:"ok"`
	Skipped string `json:"skipped,omitempty"`
	Failed  string `json:"failed,omitempty"`
	// Command is the wirespeed command the figure came from, as it ran
	// inside the lab.
	Command string `json:"command,omitempty"`
}

// Judge works out the error and whether it is within the tolerance.
func (c *VerifyCheck) Judge() {
	if c.Skipped != "" || c.Failed != "" {
		c.OK = c.Skipped != ""
		return
	}
	c.Error = c.Measured - c.Truth
	if c.Truth != 0 {
		c.ErrorPct = 100 * c.Error / c.Truth
	}
	e := c.Error
	if c.Tolerance.Relative {
		e = c.ErrorPct
		if c.Truth == 0 {
			e = math.Inf(1)
		}
	}
	c.OK = !math.IsNaN(e) && e >= c.Tolerance.Low && e <= c.Tolerance.High
}

// VerifyReport is a verify run: the kernel it ran on and every check.
type VerifyReport struct {
	Kernel   string        `json:"kernel"`
	Started  time.Time     `json:"started"`
	ElapsedS float64       `json:"elapsed_s"`
	Checks   []VerifyCheck `json:"checks"`
	// OK is true when every check that ran was within its tolerance.
	OK bool `json:"ok"`
}

// Add judges c and appends it.
func (r *VerifyReport) Add(c VerifyCheck) {
	c.Judge()
	r.Checks = append(r.Checks, c)
}

// Finish sets OK from the checks.
func (r *VerifyReport) Finish() {
	r.OK = len(r.Checks) > 0
	for _, c := range r.Checks {
		if !c.OK {
			r.OK = false
		}
	}
}

// Failed are the checks out of their tolerance or not measured.
func (r VerifyReport) Failed() []VerifyCheck {
	var out []VerifyCheck
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}
