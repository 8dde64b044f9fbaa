package report

import (
	"fmt"
	"io"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/units"
)

// summaryOffloads are the offload groups the one-line summary shows, by
// their long names, in ethtool's order; the full record has them all.
var summaryOffloads = []string{
	"rx-checksumming", "tx-checksumming", "scatter-gather", "tcp-segmentation-offload",
	"generic-segmentation-offload", "generic-receive-offload", "large-receive-offload",
}

// EnvSummary writes one line per side of res with an environment record:
// the kernel, the interface of the test with its driver and MTU, the key
// offloads, the root qdisc and the congestion control the side's data
// sockets used (with the system default beside it when that differs).
// The full record is in the JSON document (local.env, remote.env).
func EnvSummary(w io.Writer, res result.Result) {
	for _, s := range []struct {
		name string
		side result.Side
		env  *sysinfo.Env
	}{{"local", result.Local, res.Local.Env}, {"remote", result.Remote, res.Remote.Env}} {
		if s.env != nil {
			fmt.Fprintf(w, "%-6s env: %s\n", s.name, envLine(*s.env, res.CongestionControl(s.side)))
		}
	}
}

// envLine is an environment record in one line:
// "kernel 6.8.0, governor performance, wst-a (veth) mtu 9000, rx on tx on sg on tso off gso on
// gro on lro off, qdisc noqueue, cc cubic", with the congestion control
// the data sockets used when known ("" for none): "cc cubic (default
// bbr)".
func envLine(env sysinfo.Env, socketCC string) string {
	parts := []string{"kernel " + orDash(env.KernelRelease)}
	if f := env.CPUFreq; f != nil && f.Available {
		parts = append(parts, "governor "+f.Governor())
	}
	if ifc := env.Interface; ifc != nil {
		dev := ifc.Name
		if ifc.Driver != "" {
			dev += " (" + ifc.Driver + ")"
		}
		parts = append(parts, fmt.Sprintf("%s mtu %d", dev, ifc.MTU))
		var offs []string
		for _, name := range summaryOffloads {
			if f, ok := ifc.Feature(name); ok {
				offs = append(offs, sysinfo.OffloadShort(name)+" "+onOff(f.On))
			}
		}
		if len(offs) > 0 {
			parts = append(parts, strings.Join(offs, " "))
		}
		if q := ifc.Qdisc; q != nil {
			qs := "qdisc " + q.Kind
			if q.RateBitsPerSecond > 0 {
				qs += " " + units.FormatBits(float64(q.RateBitsPerSecond))
			}
			parts = append(parts, qs)
		}
	} else {
		parts = append(parts, "interface unknown")
	}
	cc := "cc " + orDash(env.CongestionControl.Default)
	if socketCC != "" && socketCC != env.CongestionControl.Default {
		cc = "cc " + socketCC + " (default " + orDash(env.CongestionControl.Default) + ")"
	}
	parts = append(parts, cc)
	return strings.Join(parts, ", ")
}
