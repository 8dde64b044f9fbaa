package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"wirespeed/internal/netdev"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/units"
)

// EnvOptions change how Env shows a record.
type EnvOptions struct {
	// AllFeatures lists every kernel feature, as ethtool -k does, instead
	// of a count under the offload groups.
	AllFeatures bool
}

// Env writes the environment record of one host as a block of
// "label  value" lines.
func Env(w io.Writer, env sysinfo.Env, opts EnvOptions) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, format string, a ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", label, fmt.Sprintf(format, a...))
	}
	row("host", "%s", orDash(env.Hostname))
	row("kernel", "%s", orDash(env.KernelRelease))
	switch {
	case env.CPU.Count > 0 && env.CPU.Model != "":
		row("cpu", "%d x %s", env.CPU.Count, env.CPU.Model)
	case env.CPU.Count > 0:
		row("cpu", "%d", env.CPU.Count)
	default:
		row("cpu", "-")
	}
	if f := env.CPUFreq; f != nil {
		g := f.Governor()
		if !f.Available {
			g = "none (no cpufreq: the hypervisor or the firmware sets the frequency)"
		} else if f.Driver != "" {
			g += "; scaling driver " + f.Driver
		}
		row("cpu governor", "%s", g)
	}
	// The long values continue under themselves, the label column
	// (its longest label, "congestion control", and two spaces) empty.
	long := func(label string, parts []string, sep string) {
		for i, l := range fitListIn(Width-len("congestion control  "), "", parts, sep, 0) {
			if i > 0 {
				label = ""
			}
			row(label, "%s", l)
		}
	}
	ccParts := []string{orDash(env.CongestionControl.Default)}
	if av := env.CongestionControl.Available; len(av) > 0 {
		ccParts[0] += " (available:"
		ccParts = append(ccParts, av...)
		ccParts[len(ccParts)-1] += ")"
	}
	long("congestion control", ccParts, " ")
	names := make([]string, 0, len(env.Sysctls))
	for n := range env.Sysctls {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		label := ""
		if i == 0 {
			label = "sysctls"
		}
		vals := make([]string, len(env.Sysctls[n]))
		for j, v := range env.Sysctls[n] {
			vals[j] = fmt.Sprint(v)
		}
		row(label, "%s = %s", n, strings.Join(vals, " "))
	}
	if env.DataPath != nil {
		long("data path", strings.Split(dataPathSupport(*env.DataPath), ", "), ", ")
	}
	tw.Flush()
	if env.Interface == nil {
		fmt.Fprintln(w, "interface: none described; name one with --dev or give --peer")
		return
	}
	writeInterface(w, env, opts)
}

func writeInterface(w io.Writer, env sysinfo.Env, opts EnvOptions) {
	ifc := env.Interface
	fmt.Fprintln(w)
	head := fmt.Sprintf("interface %s (index %d)", ifc.Name, ifc.Index)
	if env.Peer != "" {
		head += ", carries traffic to " + env.Peer
	}
	fmt.Fprintln(w, head)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, format string, a ...any) {
		fmt.Fprintf(tw, "  %s\t%s\n", label, fmt.Sprintf(format, a...))
	}
	drv := orDash(ifc.Driver)
	if ifc.DriverVersion != "" {
		drv += " " + ifc.DriverVersion
	}
	if ifc.Firmware != "" {
		drv += ", firmware " + ifc.Firmware
	}
	if ifc.BusInfo != "" {
		drv += ", bus " + ifc.BusInfo
	}
	row("driver", "%s", drv)
	row("mtu", "%d", ifc.MTU)
	link := "speed unknown"
	if ifc.SpeedMbps > 0 {
		link = units.FormatBits(float64(ifc.SpeedMbps) * 1e6)
	}
	if ifc.Duplex != "" {
		link += ", " + ifc.Duplex + " duplex"
	}
	row("link", "%s", link)
	if q := ifc.Qdisc; q != nil {
		s := q.Kind + " " + q.Handle
		if q.RateBitsPerSecond > 0 {
			s += fmt.Sprintf(" rate %s burst %s limit %s", units.FormatBits(float64(q.RateBitsPerSecond)),
				units.FormatBytes(float64(q.BurstBytes)), units.FormatBytes(float64(q.LimitBytes)))
		}
		row("qdisc", "%s", s)
	} else {
		row("qdisc", "-")
	}
	tw.Flush()

	if len(ifc.Offloads) > 0 {
		fmt.Fprintln(w, "  offloads")
		featureRows(w, ifc.Offloads)
	}
	if len(ifc.Features) == 0 {
		return
	}
	if opts.AllFeatures {
		fmt.Fprintln(w, "  kernel features")
		featureRows(w, ifc.Features)
		return
	}
	on := 0
	for _, f := range ifc.Features {
		if f.On {
			on++
		}
	}
	fmt.Fprintf(w, "  kernel features: %d on, %d off (--features lists them)\n", on, len(ifc.Features)-on)
}

// featureRows writes features as ethtool -k does: "name: on [fixed]".
func featureRows(w io.Writer, fs []netdev.FeatureState) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, f := range fs {
		note := ""
		switch {
		case f.Fixed:
			note = "[fixed]"
		case f.Requested != f.On:
			note = "[requested " + onOff(f.Requested) + "]"
		}
		if note == "" {
			fmt.Fprintf(tw, "    %s:\t%s\n", f.Name, onOff(f.On))
		} else {
			fmt.Fprintf(tw, "    %s:\t%s\t%s\n", f.Name, onOff(f.On), note)
		}
	}
	tw.Flush()
}

// EnvJSON writes the record as an indented JSON document.
func EnvJSON(w io.Writer, env sysinfo.Env) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(env)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
