package archive

import (
	"time"

	"wirespeed/internal/netdev"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// Synthetic describes a generated results document, for benchmarks and
// tests that need many results with known figures: a TCP_STREAM run from
// Source to Destination with the throughput, time and environment
// given, as `wirespeed run` writes one (without intervals unless RTTs
// are given), or a TCP_RR run with its latency.
type Synthetic struct {
	Source, Destination string
	Started             time.Time
	BitsPerSecond       float64
	// Iterations, when set, are the throughputs of each iteration; the
	// result is then their mean, as -I makes it.
	Iterations []float64
	// TSO is the destination interface's TCP segmentation offload;
	// Kernel the destination's kernel release.
	TSO    bool
	Kernel string
	// SendSize is -m; 0 is 131072.
	SendSize int
	Labels   map[string]string
	// Remote, when set, changes the destination's environment record
	// after it is made (a driver, an MTU, a governor, ...).
	Remote func(*sysinfo.Env)
	// RTTMicros, when set, are the sender's smoothed RTT at the end of
	// each of as many one-second intervals.
	RTTMicros []float64
	// Latency, when set, makes the run a TCP_RR with these transaction
	// times; BitsPerSecond is then its request and response bits.
	Latency *stats.Latency
}

// Document builds the document.
func (s Synthetic) Document() result.Document {
	t := spec.Default()
	if s.SendSize > 0 {
		t.SendSize = s.SendSize
	}
	kernel := s.Kernel
	if kernel == "" {
		kernel = "6.12.0"
	}
	env := func(host, peer string, tso bool) *sysinfo.Env {
		return &sysinfo.Env{
			Hostname: host, KernelRelease: kernel, Peer: peer,
			CPU:               sysinfo.CPUInfo{Model: "Test CPU", Count: 2},
			CongestionControl: sysinfo.CongestionControl{Default: "cubic"},
			Interface: &sysinfo.Interface{Name: "eth0", Driver: "veth", MTU: 1500,
				Offloads: []netdev.FeatureState{{Name: "tcp-segmentation-offload", On: tso}},
				Qdisc:    &sysinfo.Qdisc{Kind: "noqueue"}},
		}
	}
	sum := result.Summary{BitsPerSecond: s.BitsPerSecond, SenderBitsPerSecond: s.BitsPerSecond, ElapsedS: 10, SenderElapsedS: 10,
		Bytes: int64(s.BitsPerSecond / 8 * 10), Limit: &result.Limit{Kind: "link"}}
	if s.Latency != nil {
		t.Kind, t.RequestSize, t.ResponseSize = spec.TCPRR, 1, 1
		sum.RRSummary = &result.RRSummary{Transactions: s.Latency.Count, TransactionsPerSecond: float64(s.Latency.Count) / 10, Latency: *s.Latency}
	}
	r := result.Result{
		Spec:       t,
		Started:    s.Started,
		Summary:    sum,
		Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Sender: result.Local, Receiver: result.Remote, Summary: sum}},
		Local:      result.SideInfo{Hostname: s.Source, Env: env(s.Source, s.Destination, true)},
		Remote:     result.SideInfo{Hostname: s.Destination, Address: s.Destination + ":7575", Env: env(s.Destination, s.Source, s.TSO)},
	}
	if s.Remote != nil {
		s.Remote(r.Remote.Env)
	}
	for i, rtt := range s.RTTMicros {
		r.Intervals = append(r.Intervals, result.Interval{StartS: float64(i), EndS: float64(i + 1), RTTMicros: rtt,
			Bytes: sum.Bytes / int64(len(s.RTTMicros)), BitsPerSecond: s.BitsPerSecond})
	}
	if len(s.Iterations) > 1 {
		var mean float64
		for i, v := range s.Iterations {
			mean += v / float64(len(s.Iterations))
			r.Iterations = append(r.Iterations, result.Iteration{Index: i + 1, Started: s.Started, Summary: result.Summary{BitsPerSecond: v}})
		}
		r.Summary.BitsPerSecond = mean
		r.Directions[0].Summary.BitsPerSecond = mean
	}
	return result.Document{Schema: result.Schema, Tool: result.Tool{Name: "wirespeed", Version: "synthetic"}, Command: "run",
		Labels: s.Labels, Result: r}
}
