package result

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// TestMean averages two iterations field by field and checks every field
// against the mean worked out by hand (in the comments): a wrong field
// anywhere (a P90 taken for a P99, a count not rounded, a loss over the
// wrong count) shows in the diff.
func TestMean(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-12)
	run := func(s Summary, stream int64) Result {
		return Result{
			Summary: s,
			Directions: []DirectionResult{{Direction: spec.ClientToServer, Summary: s,
				Streams: []Stream{{ID: 1, Direction: spec.ClientToServer, Receiver: StreamSide{ID: 1, Bytes: stream}}}}},
		}
	}
	tests := []struct {
		name string
		a, b Summary
		want Summary
	}{
		{
			name: "UDP stream",
			a: Summary{BitsPerSecond: 100e6, SenderBitsPerSecond: 101e6, Bytes: 125_000_000, SenderBytes: 126_000_001, ElapsedS: 10, SenderElapsedS: 10.5, Retransmits: 3,
				UDPSummary: &UDPSummary{PacketsSent: 1000, SendErrors: 2, PacketsReceived: 900, Lost: 100, LossPct: 10, OutOfOrder: 1, Duplicates: 0, JitterMs: 0.2}},
			b: Summary{BitsPerSecond: 200e6, SenderBitsPerSecond: 203e6, Bytes: 300_000_000, SenderBytes: 303_000_000, ElapsedS: 12, SenderElapsedS: 12.5, Retransmits: 4,
				UDPSummary: &UDPSummary{PacketsSent: 3000, SendErrors: 4, PacketsReceived: 2000, Lost: 1000, LossPct: 33.3, OutOfOrder: 3, Duplicates: 2, JitterMs: 0.4}},
			// Bytes (125e6 + 300e6) / 2; sender bytes 214_500_000.5
			// and retransmits 3.5 round up. Datagrams: 2000 sent,
			// 1450 received, so 550 lost: 27.5% of those sent (not
			// the mean of 10% and 33.3%).
			want: Summary{BitsPerSecond: 150e6, SenderBitsPerSecond: 152e6, Bytes: 212_500_000, SenderBytes: 214_500_001, ElapsedS: 11, SenderElapsedS: 11.5, Retransmits: 4,
				UDPSummary: &UDPSummary{PacketsSent: 2000, SendErrors: 3, PacketsReceived: 1450, Lost: 550, LossPct: 27.5, OutOfOrder: 2, Duplicates: 1, JitterMs: 0.3}},
		},
		{
			name: "TCP_RR",
			a: Summary{RRSummary: &RRSummary{Transactions: 10000, TransactionsPerSecond: 1000, Timeouts: 1, ClientTransactions: 10010, ServerTransactions: 10011,
				Latency: stats.Latency{Count: 10000, Min: 20, Mean: 30, P50: 28, P90: 40, P99: 60, P999: 90, Max: 200, StdDev: 5}}},
			b: Summary{RRSummary: &RRSummary{Transactions: 20000, TransactionsPerSecond: 2000, Timeouts: 2, ClientTransactions: 20020, ServerTransactions: 20021,
				Latency: stats.Latency{Count: 20000, Min: 22, Mean: 34, P50: 30, P90: 44, P99: 63, P999: 100, Max: 300, StdDev: 7}}},
			// Each latency figure the mean of the two; the count is
			// the transactions timed in all, 30000; 1.5 timeouts
			// round to 2.
			want: Summary{RRSummary: &RRSummary{Transactions: 15000, TransactionsPerSecond: 1500, Timeouts: 2, ClientTransactions: 15015, ServerTransactions: 15016,
				Latency: stats.Latency{Count: 30000, Min: 21, Mean: 32, P50: 29, P90: 42, P99: 61.5, P999: 95, Max: 250, StdDev: 6}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Mean([]Result{run(tt.a, 1), run(tt.b, 2)})
			if d := cmp.Diff(tt.want, got.Summary, approx); d != "" {
				t.Errorf("mean summary (-want +got):\n%s", d)
			}
			if len(got.Directions) != 1 {
				t.Fatalf("%d directions, want 1", len(got.Directions))
			}
			if d := cmp.Diff(tt.want, got.Directions[0].Summary, approx); d != "" {
				t.Errorf("mean of the direction's summary (-want +got):\n%s", d)
			}
			if s := got.Directions[0].Streams; len(s) != 1 || s[0].Receiver.Bytes != 2 {
				t.Errorf("streams %+v, want the last run's", s)
			}
		})
	}
	if got := Mean(nil); got.Directions != nil || got.Summary != (Summary{}) {
		t.Errorf("Mean(nil) = %+v, want the zero Result", got)
	}
}
