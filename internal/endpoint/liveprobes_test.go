package endpoint

import (
	"slices"
	"testing"
	"time"

	"wirespeed/internal/engine"
)

// plantedProber is a prober whose samples the test planted.
type plantedProber []engine.ProbeSample

func (p plantedProber) Samples() []engine.ProbeSample { return p }

// TestLiveProbesAnswered: the round trips an RRUL interval line shows are
// those of the probes answered within the interval, counted from the
// load's start: hand-placed samples, the load 2 s after the origin.
func TestLiveProbesAnswered(t *testing.T) {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	udp := plantedProber{
		{SentNanos: ms(1500), RTTNanos: ms(10)},  // answered in the idle phase
		{SentNanos: ms(2100), RTTNanos: ms(50)},  // answered at 0.15 s of the load
		{SentNanos: ms(2500), RTTNanos: ms(600)}, // sent in the first second, answered in the second
		{SentNanos: ms(2600), RTTNanos: -1},      // never answered
	}
	tcp := plantedProber{{SentNanos: ms(2900), RTTNanos: ms(200), ConnectNanos: ms(3)}} // answered at 1.1 s
	origin := time.Unix(1000, 0)
	var l LiveProbes
	l.start(origin, udp, tcp)
	if got := l.Answered(0, 1); got != nil {
		t.Errorf("before the load started: %v, want none", got)
	}
	l.loadStarted(origin.Add(2 * time.Second))
	for _, tt := range []struct {
		from, to float64
		want     []float64
	}{
		{0, 1, []float64{50}},
		{1, 2, []float64{600, 200}},
		{2, 3, nil},
	} {
		if got := l.Answered(tt.from, tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("Answered(%g, %g) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}
