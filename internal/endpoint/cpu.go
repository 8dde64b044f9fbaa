package endpoint

import (
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// cpuMeter samples this side's CPU (system-wide /proc/stat and the
// process's rusage) when the first of its flows opens its window and each
// time one closes, keeping the last: the figures cover the span from the
// first window's opening to the last one's close. Two reads of /proc/stat
// and getrusage per window, and of /proc/PID/stat for this process's
// threads and every process, none in the hot loops. The scan of every
// process is the slow part: it runs on a goroutine of its own at the
// opening and, at the close, beside the loops' stop (scanProcs).
//
// A nil *cpuMeter measures nothing, so the hooks in the flows need no
// check of their own.
type cpuMeter struct {
	procRoot string
	pid      int
	// reuse is how old a scan of the tasks another run of this process
	// took may be and still serve as one of this window's (scans).
	reuse time.Duration

	mu       sync.Mutex
	opened   bool
	start    time.Time
	sys0     measure.CPUSample
	proc0    measure.ProcessCPU
	tasks0   taskSample
	end      time.Time
	sys1     measure.CPUSample
	proc1    measure.ProcessCPU
	tasks1   taskSample
	closed   bool
	firstErr error
	// openDone and procsDone are closed when the scan of every process at
	// the opening and at the close, which run beside the window's start
	// and beside the loops' stop (scanProcs), have filled tasks0.procs and
	// tasks1.procs.
	openDone, procsDone chan struct{}
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
	return &cpuMeter{procRoot: root, pid: os.Getpid(), reuse: scanReuse(cfg.Spec.Omit + cfg.Spec.Duration)}
}

// taskSample is this process's threads and every process on the host,
// each with the moment it was read (threadsAt, procsAt), for telling which
// thread did the work and how much CPU other processes took; err says why
// they are missing. Its maps may be shared with other runs' meters
// (scans): read them, never write.
type taskSample struct {
	threads, procs     measure.Tasks
	threadsAt, procsAt time.Time
	err                error
}

// threads takes this process's threads now (scans), while the loops'
// threads exist; every other process follows on a goroutine (scanProcs).
func (m *cpuMeter) threads() taskSample {
	var ts taskSample
	ts.threads, ts.threadsAt, ts.err = scans.take(scanKey{m.procRoot, m.pid}, m.reuse)
	return ts
}

// scanProcs takes every process (scans) into dst on a goroutine of its
// own, unless reading the threads failed (dst.err), and returns a channel
// closed when it is done. On a loaded host that scan takes a good part of
// a short window: before the opening's /proc/stat sample it took the rest
// out of the CPU figures' window (TestCPUOnLoopback saw 17 ms of 300),
// and at the close it kept the sender sending, and so the peer waiting for
// its end of stream (13 ms of a 1 s run on this machine's few hundred
// processes). Call with m.mu held; the goroutine takes it to fill dst.
func (m *cpuMeter) scanProcs(dst *taskSample) chan struct{} {
	done, terr := make(chan struct{}), dst.err
	go func() {
		defer close(done)
		if terr != nil {
			return
		}
		procs, at, err := scans.take(scanKey{procRoot: m.procRoot}, m.reuse)
		m.mu.Lock()
		dst.procs, dst.procsAt, dst.err = procs, at, err
		m.mu.Unlock()
	}()
	return done
}

// The scans of the tasks are the costly part of a window's CPU figures:
// a few milliseconds for every process on a host of a few hundred, and
// this process's threads, at each end of every run's window. A server
// running 64 tests at once made 128 of each, for figures about the one
// host and process they share, and they were two fifths of its CPU. So
// the runs of one process share them (scans): a window's end takes a scan
// another run took at most reuse before (or waits for the one under way)
// instead of making its own. Its figures of threads and of other
// processes are then over the span between its two scans of each, not
// its window: the span starts and ends at most reuse before the window's
// ends, and the utilizations are over the span's own length, so they
// stay right for it.
var scans = scanCache{read: readScan}

// readScan reads this process's threads (key.pid set) or every process
// (key.pid 0) now.
func readScan(key scanKey) (measure.Tasks, error) {
	if key.pid != 0 {
		return measure.ReadThreads(key.procRoot, key.pid)
	}
	return measure.ReadProcesses(key.procRoot)
}

// scanReuse is how old a shared scan may be for a window of length d: a
// fiftieth of it (2%), at most 200 ms.
func scanReuse(d time.Duration) time.Duration { return min(d/50, 200*time.Millisecond) }

// scanCache holds the newest scan of each kind, and the one under way.
type scanCache struct {
	read    func(scanKey) (measure.Tasks, error)
	mu      sync.Mutex
	entries map[scanKey]*scanEntry
}

// scanKey names a scan: the threads of process pid, or with pid 0 every
// process, under a proc root.
type scanKey struct {
	procRoot string
	pid      int
}

type scanEntry struct {
	tasks   measure.Tasks
	at      time.Time // when the newest successful scan started; zero for none
	running chan struct{}
	err     error // of the scan under way, once it is done
}

// take returns a scan no older than reuse, and when it started, making
// one when there is none; a caller that finds a scan under way waits for
// it, since it will be the freshest.
func (c *scanCache) take(key scanKey, reuse time.Duration) (measure.Tasks, time.Time, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[scanKey]*scanEntry{}
	}
	e := c.entries[key]
	if e == nil {
		e = &scanEntry{}
		c.entries[key] = e
	}
	for e.running != nil {
		running := e.running
		c.mu.Unlock()
		<-running
		c.mu.Lock()
		if e.running == nil && e.err == nil && !e.at.IsZero() {
			tasks, at := e.tasks, e.at
			c.mu.Unlock()
			return tasks, at, nil
		}
		// It failed, or another caller started the next: go round.
	}
	if !e.at.IsZero() && time.Since(e.at) <= reuse {
		tasks, at := e.tasks, e.at
		c.mu.Unlock()
		return tasks, at, nil
	}
	done := make(chan struct{})
	e.running = done
	c.mu.Unlock()
	at := time.Now()
	tasks, err := c.read(key)
	c.mu.Lock()
	e.running, e.err = nil, err
	if err == nil {
		e.tasks, e.at = tasks, at
	}
	c.mu.Unlock()
	close(done)
	return tasks, at, err
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
	m.tasks0 = m.threads()
	m.openDone = m.scanProcs(&m.tasks0)
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
	if done := m.procsDone; done != nil {
		// An earlier flow's closing scan: let it end before this one.
		m.mu.Unlock()
		<-done
		m.mu.Lock()
	}
	at, sys, proc, err := m.sample()
	if err != nil {
		m.firstErr = err
		return
	}
	m.closed, m.end, m.sys1, m.proc1 = true, at, sys, proc
	m.tasks1 = m.threads()
	m.procsDone = m.scanProcs(&m.tasks1)
}

// result fills the side's CPU figures, or says why there are none. The
// service demand is left to result.Join, which knows the test's bytes.
func (m *cpuMeter) result(res *result.SideResult) {
	if m == nil {
		return
	}
	m.mu.Lock()
	for _, done := range []chan struct{}{m.openDone, m.procsDone} {
		if done != nil {
			m.mu.Unlock()
			<-done
			m.mu.Lock()
		}
	}
	defer m.mu.Unlock()
	switch {
	case m.firstErr != nil:
		res.CPUError = m.firstErr.Error()
	case m.closed:
		elapsed := m.end.Sub(m.start).Seconds()
		usage := measure.CPUDelta(m.sys0, m.sys1)
		c := measure.CPUResult(usage, m.proc1.Sub(m.proc0), elapsed, 0)
		c.PID = m.pid
		switch {
		case m.tasks0.err != nil:
			c.TasksError = m.tasks0.err.Error()
		case m.tasks1.err != nil:
			c.TasksError = m.tasks1.err.Error()
		default:
			// Over the span between each kind's two scans (shared ones
			// may be a little older than the window's ends).
			c.Threads = measure.TaskDelta(m.tasks0.threads, m.tasks1.threads, span(m.tasks0.threadsAt, m.tasks1.threadsAt, elapsed)).Busiest
			for _, th := range c.Threads {
				sh, ok := usage.SharesOf(th.LastCPU)
				if ok && th.LastCPU != usage.BusiestCPU && !slices.ContainsFunc(c.ThreadCPUShares, func(s measure.CPUShares) bool { return s.CPU == sh.CPU }) {
					c.ThreadCPUShares = append(c.ThreadCPUShares, sh)
				}
			}
			others := measure.TaskDelta(m.tasks0.procs, m.tasks1.procs, span(m.tasks0.procsAt, m.tasks1.procsAt, elapsed), m.pid)
			c.OtherProcessesUtilPct, c.OtherProcesses = others.UtilPct, others.Busiest
		}
		res.CPU = &c
	}
}

// span is the seconds from a to b, or elapsed when either is unknown.
func span(a, b time.Time, elapsed float64) float64 {
	if a.IsZero() || !b.After(a) {
		return elapsed
	}
	return b.Sub(a).Seconds()
}

// cpuSample is the meter's readings at one moment, for a window it fills
// later (fill); ok is false when they could not be read.
type cpuSample struct {
	at    time.Time
	sys   measure.CPUSample
	proc  measure.ProcessCPU
	tasks taskSample
	ok    bool
}

// take reads the meter's counters now without opening or closing it.
func (m *cpuMeter) take() cpuSample {
	if m == nil {
		return cpuSample{}
	}
	at, sys, proc, err := m.sample()
	if err != nil {
		return cpuSample{}
	}
	// Not the threads and processes: reading every process's stat is the
	// costly part, and this runs as the data is about to start.
	return cpuSample{at: at, sys: sys, proc: proc, tasks: taskSample{err: errNoTasks}, ok: true}
}

// errNoTasks is why a window filled for a flow that got no data has no
// thread or process figures.
var errNoTasks = errors.New("no data arrived: threads and processes not sampled")

// fill makes a and b the meter's window, for a flow whose data never
// came, unless a flow opened the meter's own window.
func (m *cpuMeter) fill(a, b cpuSample) {
	if m == nil || !a.ok || !b.ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opened || m.firstErr != nil {
		return
	}
	m.opened, m.start, m.sys0, m.proc0, m.tasks0 = true, a.at, a.sys, a.proc, a.tasks
	m.closed, m.end, m.sys1, m.proc1, m.tasks1 = true, b.at, b.sys, b.proc, b.tasks
}
