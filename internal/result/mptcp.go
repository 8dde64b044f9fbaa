package result

import "wirespeed/internal/measure"

// MPTCPStream is what a side's kernel said of one data connection of a
// --mptcp test after its handshake.
type MPTCPStream struct {
	// Active is true when the connection is Multipath TCP, false when
	// it fell back to TCP: the peer, or a middlebox between, refused
	// MPTCP.
	Active bool `json:"active"`
	// Info is the kernel's MPTCP_INFO at the end of the window, for an
	// active connection where the kernel gave it.
	Info *measure.MPTCPInfo `json:"info,omitempty"`
}

// joinMPTCP warns, for a --mptcp test, of each side's streams that fell
// back to TCP, and of a side that kept no MPTCP record: its wirespeed
// predates --mptcp (a server then accepts on its TCP port, and the
// client's streams fall back too).
func joinMPTCP(res *Result, local, remote SideResult) {
	if !res.Spec.MPTCP {
		return
	}
	for _, s := range []SideResult{local, remote} {
		var streams, fell, recorded int
		for _, f := range s.Flows {
			for _, ss := range f.Streams {
				streams++
				if ss.MPTCP == nil {
					continue
				}
				recorded++
				if !ss.MPTCP.Active {
					fell++
				}
			}
		}
		switch {
		case streams > 0 && recorded == 0:
			res.Warnings = append(res.Warnings, Coded(WarnNoMPTCPRecord, map[string]string{"side": string(s.Side)}, nil))
		case fell > 0:
			res.Warnings = append(res.Warnings, Coded(WarnMPTCPFallback, map[string]string{"side": string(s.Side)},
				map[string]float64{"streams": float64(fell), "of": float64(recorded)}))
		}
	}
}
