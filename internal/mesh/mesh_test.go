package mesh

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func peersOf(names ...string) []result.MeshPeer {
	var out []result.MeshPeer
	for _, n := range names {
		out = append(out, result.MeshPeer{Name: n, Address: n + ":7575"})
	}
	return out
}

// fakeNet measures pairs without a network: each takes a little while,
// and it records how many ran at once and whether a peer was ever in two
// at a time. A pair's throughput is 1e6 times src*10+dst.
type fakeNet struct {
	mu       sync.Mutex
	busy     map[string]int
	running  int
	most     int
	overlaps []string
	calls    map[string]int
	// busyOnce makes the first call of these pairs ("a>b") fail busy.
	busyOnce map[string]bool
	onCall   func()
}

func (f *fakeNet) measure(ctx context.Context, src, dst result.MeshPeer) (result.Result, error) {
	key := src.Name + ">" + dst.Name
	f.mu.Lock()
	if f.busy == nil {
		f.busy, f.calls = map[string]int{}, map[string]int{}
	}
	f.calls[key]++
	first := f.calls[key] == 1
	for _, p := range []string{src.Name, dst.Name} {
		if f.busy[p]++; f.busy[p] > 1 {
			f.overlaps = append(f.overlaps, p)
		}
	}
	f.running++
	f.most = max(f.most, f.running)
	onCall := f.onCall
	f.mu.Unlock()
	if onCall != nil {
		onCall()
	}
	time.Sleep(20 * time.Millisecond)
	f.mu.Lock()
	f.busy[src.Name]--
	f.busy[dst.Name]--
	f.running--
	f.mu.Unlock()
	if first && f.busyOnce[key] {
		return result.Result{}, fmt.Errorf("server %s: %w", dst.Address, control.ErrBusy)
	}
	bps := 1e6 * float64(10*int(src.Name[0]-'a')+int(dst.Name[0]-'a'))
	s := result.Summary{BitsPerSecond: bps, ElapsedS: 1}
	return result.Result{Summary: s, Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}}}, nil
}

type progressLog struct{ lines []string }

func (p *progressLog) Measured(k, n int, mp result.MeshPair) {
	p.lines = append(p.lines, fmt.Sprintf("%d/%d %s>%s", k, n, mp.Source, mp.Destination))
}

// TestSchedulerNeverSharesAPeer: with room for three pairs at once, four
// peers run at most two pairs at once (each pair takes two peers), never
// one peer in two pairs; the pairs come back in the order asked with
// their own figures, and the matrix is built.
func TestSchedulerNeverSharesAPeer(t *testing.T) {
	peers := peersOf("a", "b", "c", "d")
	peers[0].Local = true
	pairs, err := ParsePairs(peers, nil)
	if err != nil || len(pairs) != 12 {
		t.Fatalf("pairs %v, %v", pairs, err)
	}
	f := &fakeNet{}
	prog := &progressLog{}
	plan := Plan{Spec: spec.Default(), Repeat: spec.DefaultRepeat(), Peers: peers, Pairs: pairs, Concurrency: 3}
	doc := Run(context.Background(), plan, Options{Measure: f.measure, Observer: prog})
	if len(f.overlaps) > 0 {
		t.Errorf("peers in two pairs at once: %v", f.overlaps)
	}
	if f.most != 2 {
		t.Errorf("at most %d pairs ran at once, want 2 (4 peers, room for 3)", f.most)
	}
	if len(prog.lines) != 12 || !strings.HasPrefix(prog.lines[11], "12/12 ") {
		t.Errorf("progress %q", prog.lines)
	}
	for i, p := range doc.Pairs {
		src, dst := peers[pairs[i].Src], peers[pairs[i].Dst]
		want := 1e6 * float64(10*pairs[i].Src+pairs[i].Dst)
		if p.Source != src.Name || p.Destination != dst.Name || p.Result == nil || p.Result.Summary.BitsPerSecond != want {
			t.Errorf("pair %d: %s -> %s, result %+v", i, p.Source, p.Destination, p.Result)
			continue
		}
		if p.Result.Local.Address != src.Address || p.Result.Remote.Address != dst.Address {
			t.Errorf("pair %d: addresses %s -> %s", i, p.Result.Local.Address, p.Result.Remote.Address)
		}
		wantVia := result.ViaRelay
		if src.Local {
			wantVia = result.ViaDirect
		}
		if p.Via != wantVia {
			t.Errorf("pair %s -> %s via %s, want %s", p.Source, p.Destination, p.Via, wantVia)
		}
	}
	if doc.Interrupted || doc.Matrix.Values[1][2] == nil || *doc.Matrix.Values[1][2] != 12e6 || doc.Matrix.Values[2][2] != nil {
		t.Errorf("interrupted %v, matrix %+v", doc.Interrupted, doc.Matrix)
	}
}

// TestSchedulerOneAtATime: concurrency 1 runs one pair at a time.
func TestSchedulerOneAtATime(t *testing.T) {
	peers := peersOf("a", "b", "c", "d")
	pairs, _ := ParsePairs(peers, []string{"a:b", "c:d", "b:a"})
	f := &fakeNet{}
	doc := Run(context.Background(), Plan{Peers: peers, Pairs: pairs, Concurrency: 1, Repeat: spec.DefaultRepeat()}, Options{Measure: f.measure})
	if f.most != 1 || len(doc.Pairs) != 3 || doc.Pairs[1].Source != "c" {
		t.Errorf("most %d at once, pairs %+v", f.most, doc.Pairs)
	}
}

// TestSchedulerInterrupted: pairs not started when the context ends are
// listed as not measured; the round is marked interrupted.
func TestSchedulerInterrupted(t *testing.T) {
	peers := peersOf("a", "b", "c")
	pairs, _ := ParsePairs(peers, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeNet{onCall: cancel} // the first pair's start interrupts
	doc := Run(ctx, Plan{Peers: peers, Pairs: pairs, Concurrency: 1, Repeat: spec.DefaultRepeat()}, Options{Measure: f.measure})
	if !doc.Interrupted {
		t.Fatalf("not marked interrupted")
	}
	// The pair started first (the schedule's first, not the list's)
	// was measured, and only it.
	measured := 0
	for _, p := range doc.Pairs {
		switch {
		case p.Result != nil:
			measured++
		case p.Error != result.MeshNotMeasured:
			t.Errorf("pair %s -> %s: %q", p.Source, p.Destination, p.Error)
		}
	}
	if measured != 1 {
		t.Errorf("%d pairs measured, want the one started", measured)
	}
}

// TestBusyRetried: a pair whose server says busy is tried again.
func TestBusyRetried(t *testing.T) {
	defer func(w time.Duration) { busyWait = w }(busyWait)
	busyWait = time.Millisecond
	peers := peersOf("a", "b")
	pairs, _ := ParsePairs(peers, nil)
	f := &fakeNet{busyOnce: map[string]bool{"a>b": true}}
	doc := Run(context.Background(), Plan{Peers: peers, Pairs: pairs, Concurrency: 1, Repeat: spec.DefaultRepeat()}, Options{Measure: f.measure})
	if f.calls["a>b"] != 2 || f.calls["b>a"] != 1 || doc.Pairs[0].Result == nil || doc.Pairs[0].Error != "" {
		t.Errorf("calls %v, first pair %+v", f.calls, doc.Pairs[0])
	}
}

func TestSplitPair(t *testing.T) {
	idx := map[string]int{"a": 0, "b:7575": 1, "fd00::1": 2, "[fd00::2]:7575": 3}
	tests := []struct {
		in   string
		want Pair
		ok   bool
	}{
		{"a:b:7575", Pair{0, 1}, true},
		{"b:7575:a", Pair{1, 0}, true},
		{"fd00::1:[fd00::2]:7575", Pair{2, 3}, true},
		{"a:a", Pair{}, false},
		{"a:c", Pair{}, false},
	}
	for _, tt := range tests {
		got, ok := splitPair(tt.in, idx)
		if ok != tt.ok || got != tt.want {
			t.Errorf("splitPair(%q) = %v, %v", tt.in, got, ok)
		}
	}
}

type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	return m[host], nil
}

// TestLookupPeers: a name's addresses, unmapped, deduplicated, in order.
func TestLookupPeers(t *testing.T) {
	r := mapResolver{"svc": {netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("::ffff:127.0.0.1"), netip.MustParseAddr("127.0.0.1")}}
	peers, err := LookupPeers(context.Background(), r, "svc", 7575, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 2 || peers[0].Address != "127.0.0.1:7575" || peers[1].Name != "127.0.0.3" {
		t.Errorf("peers %+v", peers)
	}
	if _, err := LookupPeers(context.Background(), r, "none", 7575, 0); err == nil || !strings.Contains(err.Error(), "0 address(es)") {
		t.Errorf("no addresses: %v", err)
	}
}

// TestMarkLocal: by name, none, or auto by this host's addresses
// (127.0.0.1 is on lo; 127.0.0.2, though routed to lo, is no interface's address).
func TestMarkLocal(t *testing.T) {
	peers := []result.MeshPeer{{Name: "x", Address: "127.0.0.1:7575"}, {Name: "y", Address: "127.0.0.2:7575"}}
	if err := MarkLocal(context.Background(), mapResolver{}, peers, "auto"); err != nil || !peers[0].Local || peers[1].Local {
		t.Errorf("auto: %v %+v", err, peers)
	}
	peers[0].Local = false
	if err := MarkLocal(context.Background(), mapResolver{}, peers, "y"); err != nil || peers[0].Local || !peers[1].Local {
		t.Errorf("by name: %v %+v", err, peers)
	}
	if err := MarkLocal(context.Background(), mapResolver{}, peers, "z"); err == nil || !strings.Contains(err.Error(), "not one of the peers (x, y)") {
		t.Errorf("unknown name: %v", err)
	}
}
