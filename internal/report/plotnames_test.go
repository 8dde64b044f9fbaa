package report

import (
	"testing"

	"wirespeed/internal/history"
)

func TestFigureShortAndSentence(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{9675e6, "9.68 Gbit/s"}, {10.3e9, "10.3 Gbit/s"}, {114e6, "114 Mbit/s"}, {1.5e6, "1.50 Mbit/s"}, {640e3, "640 kbit/s"}} {
		if got := FigureShort("bits/s", tt.v); got != tt.want {
			t.Errorf("FigureShort(%g) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := FigureShort("us", 37); got != "37.0 us" {
		t.Errorf("FigureShort(37 us) = %q", got)
	}
	env := []history.EnvChange{{Host: "h4", Name: "qdisc", Before: "tbf rate_bps=200000000", After: "tbf rate_bps=120000000"}, {Host: "h4", Name: "mtu", Before: "1500", After: "1400"}}
	if got := EnvSentence(env); got != "h4: qdisc tbf 200 Mbit/s -> tbf 120 Mbit/s, mtu 1500 -> 1400" {
		t.Errorf("EnvSentence = %q", got)
	}
}
