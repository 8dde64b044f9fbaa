package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"wirespeed/internal/result"
)

// VerifyText writes wirespeed verify's report as a table: each figure beside its truth,
// the error and the tolerance, then what each truth is and the command
// each figure came from.
func VerifyText(w io.Writer, r result.VerifyReport) error {
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
			fmt.Fprintf(tw, "%s\t%s\t%9s\t%9s\t%8s\t%s\t%s\n", c.Name, verifyFigure(c), "-", "-", "-", verifyTolerance(c.Tolerance), verdict)
			continue
		}
		errs := fmt.Sprintf("%+.1f%%", c.ErrorPct)
		if !c.Tolerance.Relative {
			errs = fmt.Sprintf("%+.3g", c.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%9s\t%9s\t%8s\t%s\t%s\n", c.Name, verifyFigure(c), verifyNumber(c.Measured), verifyNumber(c.Truth), errs, verifyTolerance(c.Tolerance), verdict)
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

// verifyTolerance is a tolerance as the table shows it: "-3%..+2%", "±10".
func verifyTolerance(t result.VerifyTolerance) string {
	unit := ""
	if t.Relative {
		unit = "%"
	}
	if t.Low == -t.High {
		return fmt.Sprintf("±%g%s", t.High, unit)
	}
	return fmt.Sprintf("%+g%s..%+g%s", t.Low, unit, t.High, unit)
}

// verifyNumber shows a figure with 4 significant digits, a count in full.
func verifyNumber(v float64) string {
	if math.Abs(v) >= 1e4 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func verifyFigure(c result.VerifyCheck) string {
	if c.Unit == "" {
		return c.Figure
	}
	return c.Figure + " (" + c.Unit + ")"
}
