package report

import (
	"fmt"
	"io"
	"strings"

	"wirespeed/internal/spec"
)

// sockOptsHeading writes the line under a run's heading that names the
// socket options it asks for (-B, --bind-dev, --cport, --tos/--dscp,
// --mss, --dont-fragment): the path and the packets they choose are part
// of what was measured. Nothing when it asks for none.
func sockOptsHeading(w io.Writer, t spec.Test) {
	var p []string
	var from []string
	if t.BindAddr != "" {
		from = append(from, "from "+t.BindAddr)
	}
	if t.BindDev != "" {
		from = append(from, "on "+t.BindDev)
	}
	if t.ClientPort != 0 {
		if n := len(t.Streams()); n > 1 {
			from = append(from, fmt.Sprintf("data ports %d-%d", t.ClientPort, t.ClientPort+n-1))
		} else {
			from = append(from, fmt.Sprintf("data port %d", t.ClientPort))
		}
	}
	if len(from) > 0 {
		p = append(p, "client "+strings.Join(from, ", "))
	}
	if t.TOS != 0 {
		s := fmt.Sprintf("TOS %#x", t.TOS)
		if n := spec.DSCPName(t.TOS); n != "" {
			s += " (DSCP " + n + ")"
		}
		p = append(p, s)
	}
	if t.MSS != 0 {
		p = append(p, fmt.Sprintf("MSS %d", t.MSS))
	}
	if t.DontFragment {
		p = append(p, "don't fragment")
	}
	if len(p) > 0 {
		for _, l := range fitList("socket options: ", p, "; ", 2) {
			fmt.Fprintln(w, l)
		}
	}
}
