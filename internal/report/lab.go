package report

import (
	"fmt"
	"io"

	"wirespeed/internal/netdev"
	"wirespeed/internal/units"
)

// LabStatus is what `wirespeed lab status` shows of one lab; the CLI fills
// it from package lab, so report does not depend on it.
type LabStatus struct {
	Name              string
	MTU               int
	RateBitsPerSecond uint64 // 0 when there is no limit
	Hosts             []LabHost
	// Error says why the lab could not be read (a half-removed lab).
	Error string
	// Server is the server lab up started in side a; nil for none.
	Server *LabServer
	// Owner names who made the lab ("alice (uid 1000)"); "" when no
	// record says.
	Owner string
	// Unreadable says why this user cannot read the lab at all (it is
	// not broken, only not this user's to read).
	Unreadable string
}

// LabHost is one side of a lab.
type LabHost struct {
	Name, Netns, Dev string
	IPv4, IPv6       string
	// RateBitsPerSecond is this host's own limit, in a mesh lab where
	// hosts differ; 0 for none (or the lab's, shown on its first line).
	RateBitsPerSecond uint64
	// Server is the server lab up started in this host of a mesh lab.
	Server *LabServer
	// Offloads are the veth end's offload groups; nil when not read.
	Offloads []netdev.FeatureState
}

// Lab writes the status of one lab.
func Lab(w io.Writer, st LabStatus) {
	by := ""
	if st.Owner != "" {
		by = ", made by " + st.Owner
	}
	switch {
	case st.Unreadable != "":
		fmt.Fprintf(w, "lab %s%s: not shown: %s\n", st.Name, by, st.Unreadable)
		return
	case st.Error != "":
		fmt.Fprintf(w, "lab %s%s: broken: %s\n", st.Name, by, st.Error)
		return
	}
	rate := "no rate limit"
	for _, h := range st.Hosts {
		if h.RateBitsPerSecond > 0 {
			rate = "rate limits per host"
		}
	}
	if st.RateBitsPerSecond > 0 {
		rate = "rate " + units.FormatBits(float64(st.RateBitsPerSecond))
	}
	fmt.Fprintf(w, "lab %s%s: mtu %d, %s\n", st.Name, by, st.MTU, rate)
	for _, h := range st.Hosts {
		hostRate := ""
		if h.RateBitsPerSecond > 0 {
			hostRate = "  rate " + units.FormatBits(float64(h.RateBitsPerSecond))
		}
		fmt.Fprintf(w, "  %s  %-16s %-6s %-15s %s%s\n", h.Name, h.Netns, h.Dev, h.IPv4, h.IPv6, hostRate)
		if len(h.Offloads) > 0 {
			var parts []string
			for _, f := range h.Offloads {
				if !f.Fixed {
					parts = append(parts, f.Name+" "+onOff(f.On))
				}
			}
			for i, line := range fitListIn(64, "", parts, ", ", 0) {
				label := "offloads:"
				if i > 0 {
					label = ""
				}
				fmt.Fprintf(w, "     %-9s %s\n", label, line)
			}
		}
		labServer(w, h.Server)
	}
	labServer(w, st.Server)
}
