package mesh

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func allPairs(n int) []Pair {
	var pairs []Pair
	for s := range n {
		for d := range n {
			if s != d {
				pairs = append(pairs, Pair{s, d})
			}
		}
	}
	return pairs
}

// TestTournamentRounds: every ordered pair once, in 2(n-1) rounds of
// n/2 disjoint pairs ((n-1)/2 for an odd n, one peer resting), each
// peer sending in about half of its pairs of each pass.
func TestTournamentRounds(t *testing.T) {
	for n := 2; n <= 25; n++ {
		pairs := allPairs(n)
		order := scheduleOrder(n, pairs)
		if len(order) != len(pairs) {
			t.Fatalf("n=%d: %d pairs in the order, want %d", n, len(order), len(pairs))
		}
		seen := map[int]bool{}
		for _, i := range order {
			if seen[i] {
				t.Fatalf("n=%d: pair %v twice", n, pairs[i])
			}
			seen[i] = true
		}
		per := n / 2
		if got := len(order) / per; got != 2*(n-1) && n%2 == 0 {
			t.Errorf("n=%d: %d rounds, want %d", n, got, 2*(n-1))
		}
		for r := 0; r < len(order)/per; r++ {
			used := map[int]bool{}
			for _, i := range order[r*per : (r+1)*per] {
				p := pairs[i]
				if used[p.Src] || used[p.Dst] {
					t.Fatalf("n=%d: round %d has peer %d or %d twice: %v", n, r, p.Src, p.Dst, order[r*per:(r+1)*per])
				}
				used[p.Src], used[p.Dst] = true, true
			}
		}
		sends := make([]int, n)
		for _, i := range order[:len(order)/2] {
			sends[pairs[i].Src]++
		}
		for peer, k := range sends {
			if d := k - (n - 1 - k); d < -1 || d > 1 {
				t.Errorf("n=%d: peer %d sends in %d of its %d pairs of the first pass", n, peer, k, n-1)
			}
		}
	}
}

// TestMatchingsOfSomePairs: a subset of the pairs goes in rounds of
// disjoint pairs, each as full as the pairs left allow, earliest first.
func TestMatchingsOfSomePairs(t *testing.T) {
	pairs := []Pair{{0, 1}, {1, 2}, {2, 3}, {0, 2}, {3, 0}, {1, 0}}
	got := scheduleOrder(4, pairs)
	// Round 1: 0>1, 2>3; round 2: 1>2, 3>0; round 3: 0>2; round 4: 1>0.
	if want := []int{0, 2, 1, 4, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// wavesNet is a measurement that holds every pair until the test
// releases the pairs running, so that the test sees which pairs the
// scheduler runs together.
type wavesNet struct {
	mu      sync.Mutex
	running []Pair
	release chan struct{}
	index   map[string]int
}

func (w *wavesNet) measure(ctx context.Context, src, dst result.MeshPeer) (result.Result, error) {
	w.mu.Lock()
	w.running = append(w.running, Pair{w.index[src.Name], w.index[dst.Name]})
	rel := w.release
	w.mu.Unlock()
	<-rel
	return result.Result{Directions: []result.DirectionResult{{Direction: spec.ClientToServer}}}, nil
}

// TestSchedulerRunsRounds: 24 peers at a concurrency of 12 run as 46
// waves of 12 disjoint pairs (the rounds of the tournament), however the
// pairs of a wave finish; the old order (each peer's pairs in turn) did
// not keep 12 running.
func TestSchedulerRunsRounds(t *testing.T) {
	const n = 24
	var names []string
	w := &wavesNet{index: map[string]int{}, release: make(chan struct{})}
	for i := range n {
		name := fmt.Sprintf("h%d", i+1)
		names = append(names, name)
		w.index[name] = i
	}
	peers := peersOf(names...)
	pairs := allPairs(n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	docc := make(chan *result.MeshDocument, 1)
	go func() {
		docc <- Run(ctx, Plan{Peers: peers, Pairs: pairs, Concurrency: n / 2, Repeat: spec.DefaultRepeat()}, Options{Measure: w.measure})
	}()
	waves := 0
	for started := 0; started < len(pairs); {
		// Wait until the scheduler has started all it can: a full wave,
		// or what is left.
		want := min(n/2, len(pairs)-started)
		deadline := time.Now().Add(10 * time.Second)
		for {
			w.mu.Lock()
			k := len(w.running)
			w.mu.Unlock()
			if k >= want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("wave %d: %d pairs running after 10 s, want %d", waves+1, k, want)
			}
			time.Sleep(time.Millisecond)
		}
		w.mu.Lock()
		wave := w.running
		used := map[int]bool{}
		for _, p := range wave {
			if used[p.Src] || used[p.Dst] {
				t.Fatalf("wave %d runs a peer twice: %v", waves+1, wave)
			}
			used[p.Src], used[p.Dst] = true, true
		}
		if len(wave) != want {
			t.Fatalf("wave %d has %d pairs, want %d", waves+1, len(wave), want)
		}
		started += len(wave)
		waves++
		w.running = nil
		close(w.release)
		w.release = make(chan struct{})
		w.mu.Unlock()
	}
	doc := <-docc
	if waves != 2*(n-1) {
		t.Errorf("%d waves, want %d", waves, 2*(n-1))
	}
	for _, p := range doc.Pairs {
		if p.Result == nil {
			t.Errorf("pair %s -> %s not measured: %s", p.Source, p.Destination, p.Error)
		}
	}
}
