package iperf3

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestJoinRefusesImpossibleFigures: an iperf3 server's results pass
// ParseResults with 4e18 bytes between 0 and 1e-300 s, which Join made a
// rate of +Inf (issue 47 item 4); the run fails naming the server and
// the figure, with no result.
func TestJoinRefusesImpossibleFigures(t *testing.T) {
	theirs, err := ParseResults([]byte(`{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":-1,
		"streams":[{"id":1,"bytes":4000000000000000000,"retransmits":-1,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1e-300}]}`))
	if err != nil {
		t.Fatalf("ParseResults: %v", err)
	}
	sp := spec.Default()
	sp.Kind, sp.Duration = spec.TCPStream, time.Second
	cr := &clientRun{cl: &client{cfg: ClientConfig{Addr: "127.0.0.1:5201"}, t: sp}, started: time.Now()}
	res, err := cr.join(context.Background(), result.SideResult{Side: result.Local}, theirs, sideResult{}, sideResult{})
	if !errors.Is(err, result.ErrFigure) || !strings.Contains(err.Error(), "iperf3 server 127.0.0.1:5201") ||
		!strings.Contains(err.Error(), "result.flows[0].bytes is 4e+18") || len(res.Directions) != 0 {
		t.Errorf("join: %v, %d directions; want the figure refused, naming the server, and no result", err, len(res.Directions))
	}
}
