package report

import (
	"maps"
	"slices"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TickOrder puts the interval lines of a test of several directions
// (TCP_BIDIR) in the test's order: each interval's client->server block,
// then its server->client block, as the result's table lists them. The
// ticks come as each side measures them, the local receiver's before the
// remote one's (which the server relays), so printed as they come the
// server->client block led. A TickOrder holds an interval's ticks until
// every direction has given it, or a later interval has come (a
// direction whose window ended early gives no more). It is not safe for
// concurrent use; live output holds its own lock.
type TickOrder struct {
	dirs    []spec.Direction
	pending map[int][]result.Tick
}

// NewTickOrder returns the order of t's interval lines.
func NewTickOrder(t spec.Test) *TickOrder {
	return &TickOrder{dirs: t.Directions(), pending: map[int][]result.Tick{}}
}

// Add takes one tick and returns the ticks now due, in order.
func (o *TickOrder) Add(tk result.Tick) []result.Tick {
	if len(o.dirs) <= 1 {
		return []result.Tick{tk}
	}
	o.pending[tk.Index] = append(o.pending[tk.Index], tk)
	var out []result.Tick
	for _, k := range slices.Sorted(maps.Keys(o.pending)) {
		if k < tk.Index || len(o.pending[k]) >= len(o.dirs) {
			out = append(out, o.take(k)...)
		}
	}
	return out
}

// Flush returns every tick held, in order: at the end of the test.
func (o *TickOrder) Flush() []result.Tick {
	var out []result.Tick
	for _, k := range slices.Sorted(maps.Keys(o.pending)) {
		out = append(out, o.take(k)...)
	}
	return out
}

func (o *TickOrder) take(k int) []result.Tick {
	ts := o.pending[k]
	delete(o.pending, k)
	slices.SortStableFunc(ts, func(a, b result.Tick) int {
		return slices.Index(o.dirs, a.Direction) - slices.Index(o.dirs, b.Direction)
	})
	return ts
}
