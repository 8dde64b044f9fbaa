package exporter

import (
	"math"
	"testing"

	"wirespeed/internal/result"
)

// TestProbeRefusesImpossibleFigures: a result holding a figure no
// measurement gives is no result (issue 47 item 4: the exporter reported
// probe_success 1 with throughput +Inf): probe_success 0 and none of its
// figures exported.
func TestProbeRefusesImpossibleFigures(t *testing.T) {
	for _, tt := range []struct {
		name string
		bps  float64
	}{{"+Inf", math.Inf(1)}, {"-7.2e13 Mbit/s", -7.2e19}, {"7.2e299 bit/s", 7.2e299}} {
		t.Run(tt.name, func(t *testing.T) {
			res := streamResult()
			res.Directions = append([]result.DirectionResult(nil), res.Directions...)
			res.Directions[0].Summary.BitsPerSecond = tt.bps
			got := collect(t, res)
			if got["probe_success"] != 0 {
				t.Errorf("probe_success %g, want 0", got["probe_success"])
			}
			for k, v := range got {
				if math.IsInf(v, 0) || v == tt.bps {
					t.Errorf("%s exported as %g", k, v)
				}
			}
			if _, ok := got["wirespeed_probe_throughput_bits_per_second{direction=client_to_server}"]; ok {
				t.Error("the refused result's throughput is exported")
			}
		})
	}
}
