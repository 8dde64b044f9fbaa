package iperf3

import "testing"

// FuzzParse feeds the parameter and results parsers anything: they must
// return an error or a value within their bounds, never panic, and what
// they accept must survive a round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{params312TCP, params312UDP, params312Bidi, results312Server, `{}`, `[]`, `{"parallel":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := ParseParams(b); err == nil {
			if p.Parallel < 1 || p.Parallel > 128 || p.Len < 0 || p.Time < 0 || p.Omit < 0 || p.Bandwidth < 0 {
				t.Fatalf("ParseParams accepted out-of-range %+v", p)
			}
			out, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseParams(out); err != nil && p.Len != 0 {
				t.Fatalf("ParseParams(Marshal(%+v)) = %v", p, err)
			}
		}
		if r, err := ParseResults(b); err == nil {
			if len(r.Streams) > maxStreams {
				t.Fatalf("ParseResults accepted %d streams", len(r.Streams))
			}
			for _, s := range r.Streams {
				if s.Bytes < 0 || s.Retransmits < -1 || s.Packets < 0 || s.ID < 1 {
					t.Fatalf("ParseResults accepted out-of-range %+v", s)
				}
			}
			out, err := r.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseResults(out); err != nil {
				t.Fatalf("ParseResults(Marshal(%+v)) = %v", r, err)
			}
		}
	})
}
