// Package verify sets wirespeed's figures beside ground truths on the
// user's own kernel: it builds labs of network namespaces whose truth is
// known (a tbf of a known rate and queue, a router whose qdisc drops, an
// MTU, offloads off), runs wirespeed's own tests in them as a user
// would (the binary, as subprocesses in the labs' namespaces), and reads
// each truth from something wirespeed did not compute: the rate the lab
// set, the router qdisc's drop counter, a device's packet counter,
// /proc/stat, irtt's round trips.
//
// No other tool does this, so the design is the project's own; the
// truths and their tolerances are listed in docs/verify.md.
package verify

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Config is how to run wirespeed inside the labs.
type Config struct {
	// Exe is the wirespeed binary the labs run (os.Executable()).
	Exe string
	// Name prefixes the labs' names ("wsv": wst-wsv-t-a and so on); at
	// most 20 characters of a lab name.
	Name string
	// Progress gets a line as each lab and run starts; nil for none.
	Progress io.Writer
}

// Header sizes the truths are worked out with.
const (
	ipv4Header = 20
	tcpHeader  = 20 + 12 // with the timestamp option Linux sends
	udpHeader  = 8
	ethHeader  = 14 // what a qdisc and a device's byte counters count beyond IP
)

// mss is TCP's payload per segment at an MTU, with timestamps.
func mss(mtu int) int { return mtu - ipv4Header - tcpHeader }

// Tolerance bounds a check's error: Low <= error <= High, in percent of
// the truth when Relative, else in the figure's unit.
type Tolerance struct {
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Relative bool    `json:"relative"`
}

// String is the tolerance as the table shows it: "-3%..+2%", "±10".
func (t Tolerance) String() string {
	unit := ""
	if t.Relative {
		unit = "%"
	}
	if t.Low == -t.High {
		return fmt.Sprintf("±%g%s", t.High, unit)
	}
	return fmt.Sprintf("%+g%s..%+g%s", t.Low, unit, t.High, unit)
}

// Check is one figure beside its truth.
type Check struct {
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
	Error     float64   `json:"error"`
	ErrorPct  float64   `json:"error_pct"`
	Tolerance Tolerance `json:"tolerance"`
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

// judge works out the error and whether it is within the tolerance.
func (c *Check) judge() {
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

// Report is a verify run: the kernel it ran on and every check.
type Report struct {
	Kernel   string    `json:"kernel"`
	Started  time.Time `json:"started"`
	ElapsedS float64   `json:"elapsed_s"`
	Checks   []Check   `json:"checks"`
	// OK is true when every check that ran was within its tolerance.
	OK bool `json:"ok"`
}

// add judges c and appends it.
func (r *Report) add(c Check) {
	c.judge()
	r.Checks = append(r.Checks, c)
}

// finish sets OK from the checks.
func (r *Report) finish() {
	r.OK = len(r.Checks) > 0
	for _, c := range r.Checks {
		if !c.OK {
			r.OK = false
		}
	}
}

// Failed are the checks out of their tolerance or not measured.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// WriteText writes the report as a table: each figure beside its truth,
// the error and the tolerance, then what each truth is and the command
// each figure came from.
func WriteText(w io.Writer, r Report) error {
	fmt.Fprintf(w, "wirespeed verify on Linux %s, %s, %.0f s\n\n", r.Kernel, r.Started.Format("2006-01-02 15:04:05"), r.ElapsedS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tfigure\t measured\t    truth\t   error\ttolerance\t")
	for _, c := range r.Checks {
		verdict := "ok"
		switch {
		case c.Skipped != "":
			verdict = "skipped"
		case c.Failed != "":
			verdict = "FAILED"
		case !c.OK:
			verdict = "OUT"
		}
		if c.Skipped != "" || c.Failed != "" {
			fmt.Fprintf(tw, "%s\t%s\t%9s\t%9s\t%8s\t%s\t%s\n", c.Name, figure(c), "-", "-", "-", c.Tolerance, verdict)
			continue
		}
		errs := fmt.Sprintf("%+.1f%%", c.ErrorPct)
		if !c.Tolerance.Relative {
			errs = fmt.Sprintf("%+.3g", c.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%9s\t%9s\t%8s\t%s\t%s\n", c.Name, figure(c), number(c.Measured), number(c.Truth), errs, c.Tolerance, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nthe truths, and the commands the figures came from:")
	for _, c := range r.Checks {
		switch {
		case c.Skipped != "":
			fmt.Fprintf(w, "  %s: skipped: %s\n", c.Name, c.Skipped)
		case c.Failed != "":
			fmt.Fprintf(w, "  %s: not measured: %s\n", c.Name, c.Failed)
		default:
			fmt.Fprintf(w, "  %s: %s\n", c.Name, c.TruthIs)
		}
		if c.Command != "" {
			fmt.Fprintf(w, "    %s\n", c.Command)
		}
	}
	if r.OK {
		fmt.Fprintf(w, "\nall %d checks within their tolerance\n", len(r.Checks))
		return nil
	}
	bad := r.Failed()
	names := make([]string, len(bad))
	for i, c := range bad {
		names[i] = c.Name
	}
	fmt.Fprintf(w, "\n%d of %d checks out of their tolerance or not measured: %s\n", len(bad), len(r.Checks), strings.Join(names, ", "))
	return nil
}

// number shows a figure with 4 significant digits, a count in full.
func number(v float64) string {
	if math.Abs(v) >= 1e4 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func figure(c Check) string {
	if c.Unit == "" {
		return c.Figure
	}
	return c.Figure + " (" + c.Unit + ")"
}
