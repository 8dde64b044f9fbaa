package endpoint

import (
	"time"

	"wirespeed/internal/limit"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// CloseAll closes every connection of cs that is open.
func CloseAll(cs []Conn) {
	for _, c := range cs {
		if c.Conn != nil {
			c.Conn.Close()
		}
	}
}

// Join is what a client (wirespeed's or the iperf3 one) makes of both
// sides' results once they are in: result.Join of its own and the
// server's, with when the run started, this host's name and the
// server's address, and what limited it (limit.Diagnose, docs/limits.md).
func Join(t spec.Test, local, remote result.SideResult, started time.Time, hostname, serverAddr string) result.Result {
	res := result.Join(t, local, remote)
	res.Started = started
	res.Local.Hostname = hostname
	res.Remote.Address = serverAddr
	if t.Kind == spec.RRUL && local.Probes != nil {
		// RRUL: the latency under load from the client's probes, and
		// where the queue built from both sides' samples.
		res.Summary.UnderLoad = result.UnderLoadOf(t, *local.Probes, res.Directions, local.LoadSeconds, remote.LoadSeconds)
		result.AttributeQueue(res.Summary.UnderLoad, local.Queue, remote.Queue, local.RouterQueues, res.Directions)
	}
	limit.Diagnose(&res)
	return res
}
