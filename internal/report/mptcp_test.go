package report

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// TestMPTCPRows: the -v lines of a --mptcp run's streams, from records
// planted here; a run without --mptcp gets none.
func TestMPTCPRows(t *testing.T) {
	mi := &measure.MPTCPInfo{Subflows: 2, BytesSent: 1000, BytesAcked: 999, Retransmits: 3}
	streams := []result.Stream{{ID: 1,
		Sender:   result.StreamSide{Side: result.Local, Role: result.Sender, MPTCP: &result.MPTCPStream{Active: true, Info: mi}},
		Receiver: result.StreamSide{Side: result.Remote, Role: result.Receiver, MPTCP: &result.MPTCPStream{Active: false}},
	}}
	var b strings.Builder
	mptcpRows(&b, streams)
	want := "  stream 1 local sender: MPTCP, 2 subflows; data level: 1000 bytes sent, 999 acked, 0 received, 3 retransmissions\n" +
		"  stream 1 remote receiver: TCP, fell back from MPTCP\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	mptcpRows(&b, []result.Stream{{ID: 1}})
	if b.Len() != 0 {
		t.Errorf("without --mptcp: %q, want nothing", b.String())
	}
}
