package endpoint

import (
	"sync"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
)

// hostWindow samples what is host-wide rather than per stream (the
// kernel's protocol counters, and the counters of the device that carries
// the test) over the span from the first flow's window opening to the
// last flow's window closing. The device's qdisc is read again at the
// flows' interval ticks and every PeakSampleEvery between the window's
// ends, for its largest backlog (a queue that fills and drains between
// two ticks, or in a run without ticks, -i 0, is seen); nothing here is
// read in the loops.
type hostWindow struct {
	procRoot string
	mu       sync.Mutex
	pending  int // flows whose window has not closed yet
	opened   bool
	before   measure.NetCounters
	counters *measure.Counters
	warnings []string

	// The device (Config.WireDevice), when named: its counters at the
	// window's opening and the qdisc's at each tick, then the change.
	dev      string
	nd       *netdev.Client
	wire0    *wireSample
	ticks    []netdev.QdiscCounters
	wire     *netdev.Wire
	wireWarn bool // a reading failed and was said once

	// peak is the largest backlog the peak sampler read (bytes and
	// packets apart), sampling while the window is open.
	peak     netdev.QdiscCounters
	sampling bool
}

// PeakSampleEvery is how often the device's qdisc is read for its
// largest backlog while a window is open: a 20 Mbit/s link's 100 ms
// queue fills in 100 ms, a 1 Gbit/s one's 1 MB in 8 ms; one netlink
// read of a few hundred bytes each time.
const PeakSampleEvery = 10 * time.Millisecond

// wireSample is a device's counters and when they were read.
type wireSample struct {
	at time.Time
	c  netdev.WireCounters
}

func newHostWindow(procRoot string, flows int, dev string) *hostWindow {
	if procRoot == "" {
		procRoot = measure.DefaultProcRoot
	}
	w := &hostWindow{procRoot: procRoot, pending: flows, dev: dev}
	if dev != "" {
		nd, err := netdev.Open(0)
		if err != nil {
			w.warnings = append(w.warnings, "device counters: "+err.Error())
		} else {
			w.nd = nd
		}
	}
	return w
}

// release closes the device client; call it when the run is over.
func (w *hostWindow) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sampling = false
	if w.nd != nil {
		w.nd.Close()
	}
}

// readWire reads the device's counters, nil when there is no device or
// they cannot be read (said once in the warnings). Call with w.mu held.
func (w *hostWindow) readWire() *wireSample {
	if w.nd == nil {
		return nil
	}
	c, err := w.nd.Wire(w.dev, true)
	if err != nil {
		if !w.wireWarn {
			w.wireWarn = true
			w.warnings = append(w.warnings, "device counters: "+err.Error())
		}
		return nil
	}
	return &wireSample{at: time.Now(), c: c}
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
	w.wire0 = w.readWire()
	if w.wire0 != nil {
		w.sampling = true
		go w.samplePeak()
	}
	c, err := measure.ReadNetCounters(w.procRoot)
	if err != nil {
		w.warnings = append(w.warnings, "kernel counters: "+err.Error())
		return
	}
	w.before = c
}

// samplePeak reads the qdisc every PeakSampleEvery until the window
// closes (or the window is released), keeping the largest backlog.
func (w *hostWindow) samplePeak() {
	tk := time.NewTicker(PeakSampleEvery)
	defer tk.Stop()
	for range tk.C {
		w.mu.Lock()
		if !w.sampling {
			w.mu.Unlock()
			return
		}
		if q, err := w.nd.QdiscCounters(w.dev); err == nil {
			w.peak.BacklogBytes = max(w.peak.BacklogBytes, q.BacklogBytes)
			w.peak.BacklogPackets = max(w.peak.BacklogPackets, q.BacklogPackets)
		}
		w.mu.Unlock()
	}
}

// tick is called by a flow at each of its interval ticks: the qdisc's
// backlog then, for the largest one of the window.
func (w *hostWindow) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.nd == nil || w.wire0 == nil {
		return
	}
	if q, err := w.nd.QdiscCounters(w.dev); err == nil {
		w.ticks = append(w.ticks, *q)
	}
}

// close is called once by each flow when its window closed, or when it
// never opened; the last takes the ending sample.
func (w *hostWindow) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending--; w.pending > 0 || !w.opened {
		return
	}
	w.sampling = false
	if w.wire0 != nil {
		if s := w.readWire(); s != nil {
			wr := netdev.WireOf(w.dev, s.at.Sub(w.wire0.at).Seconds(), w.wire0.c, s.c, append(w.ticks, w.peak))
			w.wire = &wr
		}
	}
	if w.before == nil {
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

// hostReading is what a flow reads for a window its schedule gave it.
type hostReading struct {
	nc   measure.NetCounters
	wire *wireSample
}

// read takes a reading of the counters for a flow's own use (a window the
// schedule gave it); its parts are nil when they cannot be read.
func (w *hostWindow) read() hostReading {
	w.mu.Lock()
	wire := w.readWire()
	w.mu.Unlock()
	c, err := measure.ReadNetCounters(w.procRoot)
	if err != nil {
		return hostReading{wire: wire}
	}
	return hostReading{nc: c, wire: wire}
}

// fill gives the host window the readings of a flow whose data never came,
// taken over the window its schedule gave it, unless another flow opened
// the host window: then that window's figures cover it.
func (w *hostWindow) fill(before, after hostReading) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opened {
		return
	}
	if a, b := before.wire, after.wire; a != nil && b != nil {
		wr := netdev.WireOf(w.dev, b.at.Sub(a.at).Seconds(), a.c, b.c, nil)
		w.wire = &wr
	}
	if before.nc == nil || after.nc == nil {
		return
	}
	d := after.nc.Delta(before.nc)
	w.counters = &d
}
