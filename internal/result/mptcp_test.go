package result

import (
	"testing"

	"wirespeed/internal/spec"
)

// TestJoinMPTCP: the warnings of a --mptcp run from each side's stream
// records, planted here: a side with a stream that fell back, a side
// without records (a server that predates --mptcp), and none without
// --mptcp.
func TestJoinMPTCP(t *testing.T) {
	side := func(s Side, recs ...*MPTCPStream) SideResult {
		f := Flow{Side: s}
		for i, r := range recs {
			f.Streams = append(f.Streams, StreamSide{ID: i + 1, Side: s, MPTCP: r})
		}
		return SideResult{Side: s, Flows: []Flow{f}}
	}
	on, off := &MPTCPStream{Active: true}, &MPTCPStream{Active: false}
	for _, tt := range []struct {
		name          string
		mptcp         bool
		local, remote SideResult
		want          []string // code/side
	}{
		{"all mptcp", true, side(Local, on, on), side(Remote, on, on), nil},
		{"one fell back", true, side(Local, on, off), side(Remote, on, on), []string{"mptcp_fallback/local 1 of 2"}},
		{"old server", true, side(Local, off, off), side(Remote, nil, nil), []string{"mptcp_fallback/local 2 of 2", "no_mptcp_record/remote 0 of 0"}},
		{"no --mptcp", false, side(Local, nil), side(Remote, nil), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := spec.Default()
			sp.MPTCP = tt.mptcp
			res := Result{Spec: sp}
			joinMPTCP(&res, tt.local, tt.remote)
			var got []string
			for _, w := range res.Warnings {
				got = append(got, string(w.Code)+"/"+w.Name("side")+" "+itoa(w.Figure("streams"))+" of "+itoa(w.Figure("of")))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("warnings %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("warning %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func itoa(f float64) string {
	return string(rune('0' + int(f)))
}
