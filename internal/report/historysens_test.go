package report

import (
	"bytes"
	"strings"
	"testing"

	"wirespeed/internal/history"
)

func TestSensitivitySentence(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		sens history.Sensitivity
		want string
	}{
		{history.Sensitivity{Points: 8, Needed: 6, MinStepPct: pct(35.2)}, "8 points: a step under 35% cannot be told from noise here"},
		{history.Sensitivity{Points: 40, Needed: 6, MinStepPct: pct(2.34)}, "40 points: a step under 2.3% cannot be told from noise here"},
		{history.Sensitivity{Points: 40, Needed: 6, MinStepPct: pct(0.0123)}, "40 points: a step under 0.012% cannot be told from noise here"},
		{history.Sensitivity{Points: 5, Needed: 6}, "5 points: too few to find a change point (it takes 6, 3 on either side)"},
		{history.Sensitivity{}, ""},
	} {
		if got := SensitivitySentence(history.Series{Sensitivity: tc.sens}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.sens, got, tc.want)
		}
	}
	// HistoryText says it under a series without a change point, and
	// not under one with.
	var b bytes.Buffer
	s := history.Series{Key: history.Key{Source: "A", Destination: "B", Test: "TCP_STREAM", MsgSize: 131072}, Figure: "throughput", Unit: "bits/s",
		Points: []history.Point{{Value: 941e6}}, Sensitivity: history.Sensitivity{Points: 1, Needed: 6}}
	HistoryText(&b, []history.Series{s})
	if !strings.Contains(b.String(), "1 points: too few to find a change point") {
		t.Errorf("history text:\n%s\nwant the sensitivity line", b.String())
	}
	b.Reset()
	s.Changes = []history.Change{{Index: 0}}
	HistoryText(&b, []history.Series{s})
	if strings.Contains(b.String(), "too few") {
		t.Errorf("history text with a change point:\n%s\nwant no sensitivity line", b.String())
	}
}
