package side

import (
	"sync"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// cpuMeter samples this side's CPU (system-wide /proc/stat and the
// process's rusage) when the first of its flows opens its window and each
// time one closes, keeping the last: the figures cover the span from the
// first window's opening to the last one's close. Two reads of /proc/stat
// and getrusage per window, none in the hot loops.
//
// A nil *cpuMeter measures nothing, so the hooks in the flows need no
// check of their own.
type cpuMeter struct {
	procRoot string

	mu       sync.Mutex
	opened   bool
	start    time.Time
	sys0     measure.CPUSample
	proc0    measure.ProcessCPU
	end      time.Time
	sys1     measure.CPUSample
	proc1    measure.ProcessCPU
	closed   bool
	firstErr error
}

// newCPUMeter returns a meter when the spec asks for CPU, nil otherwise.
func newCPUMeter(cfg *Config) *cpuMeter {
	if !cfg.Spec.CPU {
		return nil
	}
	root := cfg.ProcRoot
	if root == "" {
		root = measure.DefaultProcRoot
	}
	return &cpuMeter{procRoot: root}
}

// sample reads both counters at one moment.
func (m *cpuMeter) sample() (time.Time, measure.CPUSample, measure.ProcessCPU, error) {
	at := time.Now()
	sys, err := measure.ReadCPU(m.procRoot)
	if err != nil {
		return at, sys, measure.ProcessCPU{}, err
	}
	proc, err := measure.ReadProcessCPU()
	return at, sys, proc, err
}

// open is called by each flow as its window opens; only the first counts.
func (m *cpuMeter) open() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opened || m.firstErr != nil {
		return
	}
	at, sys, proc, err := m.sample()
	if err != nil {
		m.firstErr = err
		return
	}
	m.opened, m.start, m.sys0, m.proc0 = true, at, sys, proc
}

// close is called by each flow as its window closes; the last one counts.
func (m *cpuMeter) close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.opened || m.firstErr != nil {
		return
	}
	at, sys, proc, err := m.sample()
	if err != nil {
		m.firstErr = err
		return
	}
	m.closed, m.end, m.sys1, m.proc1 = true, at, sys, proc
}

// result fills the side's CPU figures, or says why there are none. The
// service demand is left to result.Join, which knows the test's bytes.
func (m *cpuMeter) result(res *result.SideResult) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.firstErr != nil:
		res.CPUError = m.firstErr.Error()
	case m.closed:
		c := measure.CPUResult(measure.CPUDelta(m.sys0, m.sys1), m.proc1.Sub(m.proc0), m.end.Sub(m.start).Seconds(), 0)
		res.CPU = &c
	}
}
