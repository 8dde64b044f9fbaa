package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestTickOrder: a TCP_BIDIR run's ticks, arriving server->client first
// (the local receiver's), come out client->server first for each
// interval; an interval one direction never gives is let out when a later
// one comes, and Flush lets out the rest.
func TestTickOrder(t *testing.T) {
	c2s, s2c := spec.ClientToServer, spec.ServerToClient
	tk := func(d spec.Direction, i int) result.Tick { return result.Tick{Direction: d, Index: i} }
	sp := spec.Default()
	sp.Kind = spec.TCPBidir
	o := NewTickOrder(sp)
	var got []result.Tick
	for _, in := range []result.Tick{tk(s2c, 0), tk(c2s, 0), tk(s2c, 1), tk(s2c, 2), tk(c2s, 2), tk(s2c, 3)} {
		got = append(got, o.Add(in)...)
	}
	got = append(got, o.Flush()...)
	want := []result.Tick{tk(c2s, 0), tk(s2c, 0), tk(s2c, 1), tk(c2s, 2), tk(s2c, 2), tk(s2c, 3)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// One direction: every tick at once.
	o = NewTickOrder(spec.Default())
	if got := o.Add(tk(c2s, 0)); len(got) != 1 {
		t.Errorf("TCP_STREAM tick held: %v", got)
	}
}
