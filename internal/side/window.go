package side

import (
	"sync"

	"wirespeed/internal/measure"
)

// hostWindow samples what is host-wide rather than per stream (the
// kernel's protocol counters) over the span from the first flow's window
// opening to the last flow's window closing.
type hostWindow struct {
	procRoot string
	mu       sync.Mutex
	pending  int // flows whose window has not closed yet
	opened   bool
	before   measure.NetCounters
	counters *measure.Counters
	warnings []string
}

func newHostWindow(procRoot string, flows int) *hostWindow {
	if procRoot == "" {
		procRoot = measure.DefaultProcRoot
	}
	return &hostWindow{procRoot: procRoot, pending: flows}
}

// open is called by each flow as its window opens; the first takes the
// starting sample.
func (w *hostWindow) open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opened {
		return
	}
	w.opened = true
	c, err := measure.ReadNetCounters(w.procRoot)
	if err != nil {
		w.warnings = append(w.warnings, "kernel counters: "+err.Error())
		return
	}
	w.before = c
}

// close is called once by each flow when its window closed, or when it
// never opened; the last takes the ending sample.
func (w *hostWindow) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending--; w.pending > 0 || !w.opened || w.before == nil {
		return
	}
	after, err := measure.ReadNetCounters(w.procRoot)
	if err != nil {
		w.warnings = append(w.warnings, "kernel counters: "+err.Error())
		return
	}
	d := after.Delta(w.before)
	w.counters = &d
}

// read takes a reading of the counters for a flow's own use (a window the
// schedule gave it), nil when they cannot be read.
func (w *hostWindow) read() measure.NetCounters {
	c, err := measure.ReadNetCounters(w.procRoot)
	if err != nil {
		return nil
	}
	return c
}

// fill gives the host window the readings of a flow whose data never came,
// taken over the window its schedule gave it, unless another flow opened
// the host window: then that window's figures cover it.
func (w *hostWindow) fill(before, after measure.NetCounters) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opened || before == nil || after == nil {
		return
	}
	d := after.Delta(before)
	w.counters = &d
}
