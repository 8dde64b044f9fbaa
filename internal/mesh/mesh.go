// Package mesh measures every ordered pair of a set of wirespeed servers
// (or the pairs asked), one round at a time, into a mesh document
// (result.MeshDocument with its matrix).
//
// Its scheduler runs up to Plan.Concurrency pairs at once but never two
// on one peer, so that a server with --max-tests 1 is not asked twice
// and no peer's figures are shared with another test; a pair whose
// server is busy is tried again a little later. Measuring a pair is a
// function (PairMeasure over wirespeed's protocol: directly from this
// process when the source is this host, relayed by the source's server
// otherwise), so the scheduler is tested with fakes. Finding the peers
// (LookupPeers, MarkLocal) and the pairs (ParsePairs) are here too; the
// CLI turns flags into a plan, repeats rounds and prints.
package mesh

import (
	"context"
	"errors"
	"slices"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// MaxPeers bounds a mesh: n peers make n*(n-1) pairs.
const MaxPeers = 256

// Pair is one ordered pair to measure, by the peers' indexes.
type Pair struct{ Src, Dst int }

// Plan is one round of a mesh.
type Plan struct {
	Spec   spec.Test
	Repeat spec.Repeat
	Peers  []result.MeshPeer
	// Pairs are measured, and listed in the document, in this order.
	Pairs []Pair
	// Concurrency is the most pairs measured at once (at least 1).
	Concurrency int
	// Round numbers the round in the document; 0 for a single round.
	Round int
	Tool  result.Tool
}

// Measure measures the pair src -> dst with the plan's test and repeat.
type Measure func(ctx context.Context, src, dst result.MeshPeer) (result.Result, error)

// Observer is told of each pair as it finishes.
type Observer interface {
	// Measured says p is the k-th of n pairs to finish (measured or
	// failed). It runs on Run's goroutine.
	Measured(k, n int, p result.MeshPair)
}

// Options are how a mesh measures, and who is told.
type Options struct {
	Measure Measure
	// Observer may be nil.
	Observer Observer
}

// Busy retries: a pair whose server is busy (another client's test, or a
// previous round's still ending) is tried again a little later.
const busyRetries = 2

var busyWait = 2 * time.Second // a variable for tests

// Run measures one round and returns its document, with the pairs in the
// order of plan.Pairs and the matrix built. An interrupt (ctx) stops it:
// pairs not started are listed with result.MeshNotMeasured and the document
// is marked interrupted. Run returns when every pair it started has.
func Run(ctx context.Context, plan Plan, opts Options) *result.MeshDocument {
	doc := &result.MeshDocument{
		Schema:  result.MeshSchema,
		Tool:    plan.Tool,
		Command: "mesh",
		Spec:    plan.Spec,
		Started: time.Now(),
		Peers:   plan.Peers,
		Round:   plan.Round,
	}
	if plan.Repeat.Repeats() {
		r := plan.Repeat
		doc.Repeat = &r
	}
	doc.Pairs = measureAll(ctx, plan, opts)
	if ctx.Err() != nil {
		doc.Interrupted = true
	}
	doc.BuildMatrix()
	return doc
}

// measureAll runs the scheduler: while fewer than plan.Concurrency run,
// it starts the first pending pair, in the order of scheduleOrder, whose
// peers are both free and have no pair before it left to start: each peer
// plays its pairs in that order, so that one whose pair finished early
// never takes up a pair of a later round and leaves the next round's
// partner waiting for it (schedule.go).
func measureAll(ctx context.Context, plan Plan, opts Options) []result.MeshPair {
	peers, pairs := plan.Peers, plan.Pairs
	out := make([]result.MeshPair, len(pairs))
	pending := scheduleOrder(len(peers), pairs) // schedule.go
	queue := make([][]int, len(peers))          // each peer's pairs, in that order
	for _, i := range pending {
		p := pairs[i]
		queue[p.Src] = append(queue[p.Src], i)
		if p.Dst != p.Src {
			queue[p.Dst] = append(queue[p.Dst], i)
		}
	}
	busy := make([]bool, len(peers))
	next := func(i int) bool {
		p := pairs[i]
		return !busy[p.Src] && !busy[p.Dst] && queue[p.Src][0] == i && queue[p.Dst][0] == i
	}
	done := make(chan int)
	running, finished := 0, 0
	for len(pending) > 0 || running > 0 {
		if running < max(plan.Concurrency, 1) && ctx.Err() == nil {
			k := slices.IndexFunc(pending, next)
			if k >= 0 {
				i := pending[k]
				pending = slices.Delete(pending, k, k+1)
				p := pairs[i]
				queue[p.Src] = queue[p.Src][1:]
				if p.Dst != p.Src {
					queue[p.Dst] = queue[p.Dst][1:]
				}
				busy[p.Src], busy[p.Dst] = true, true
				running++
				go func() {
					out[i] = measurePair(ctx, opts.Measure, peers[p.Src], peers[p.Dst])
					done <- i
				}()
				continue
			}
		}
		if running == 0 {
			break // interrupted with pairs left
		}
		i := <-done
		running--
		finished++
		busy[pairs[i].Src], busy[pairs[i].Dst] = false, false
		if opts.Observer != nil {
			opts.Observer.Measured(finished, len(pairs), out[i])
		}
	}
	for _, i := range pending {
		p := pairs[i]
		out[i] = result.MeshPair{Source: peers[p.Src].Name, Destination: peers[p.Dst].Name, Via: via(peers[p.Src]), Error: result.MeshNotMeasured}
	}
	return out
}

func via(src result.MeshPeer) string {
	if src.Local {
		return result.ViaDirect
	}
	return result.ViaRelay
}

// measurePair measures one pair, trying again while its server is busy.
func measurePair(ctx context.Context, measure Measure, src, dst result.MeshPeer) result.MeshPair {
	mp := result.MeshPair{Source: src.Name, Destination: dst.Name, Via: via(src)}
	var res result.Result
	var err error
	for attempt := 0; ; attempt++ {
		res, err = measure(ctx, src, dst)
		if !errors.Is(err, control.ErrBusy) || attempt >= busyRetries || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(busyWait):
		case <-ctx.Done():
		}
	}
	if len(res.Directions) > 0 {
		res.Local.Address, res.Remote.Address = src.Address, dst.Address
		mp.Result = &res
	}
	if err != nil {
		mp.Error = err.Error()
	}
	return mp
}
