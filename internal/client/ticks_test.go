package client

import (
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestFlushFarIndex: flush hands on what is left by walking the indexes
// present, whatever they are; it used to count toward them.
func TestFlushFarIndex(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.TCPStream
	var got []int
	tk := newTicker(sp, func(tick result.Tick) { got = append(got, tick.Index) })
	for _, i := range []int{1 << 62, 3, -1} {
		tk.add(result.IntervalReport{Direction: spec.ClientToServer, Role: result.Receiver, Index: i})
	}
	done := make(chan struct{})
	go func() {
		tk.flush()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("flush did not return within 5s")
	}
	if want := []int{3, 1 << 62}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("flush handed on intervals %v, want %v (-1 comes before the next one due and is dropped)", got, want)
	}
}
