package side

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
// opening and, at the close, beside the loops' stop (taskSample).
//
// A nil *cpuMeter measures nothing, so the hooks in the flows need no
// check of their own.
type cpuMeter struct {
	procRoot string
	pid      int

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
	// openDone is closed when the opening scan of every process, which
	// runs beside the window's start (open), has filled tasks0.procs.
	openDone chan struct{}
	// procsDone is closed when the closing scan of every process, which
	// runs beside the loops' stop (close), has filled tasks1.procs.
	procsDone chan struct{}
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
	return &cpuMeter{procRoot: root, pid: os.Getpid()}
}

// taskSample is this process's threads and every process on the host,
// for telling which thread did the work and how much CPU other processes
// took; err says why they are missing. The processes are read at a
// moment of their own (procsAt): the scan of every process's stat is the
// costly part (milliseconds on a host of a few hundred processes, far more
// on a loaded one), so it runs beside the window's start and, at its
// close, off the way to the end of the run (cpuMeter.open, close).
type taskSample struct {
	threads, procs measure.Tasks
	procsAt        time.Time
	err            error
}

// scanProcs scans every process into dst on a goroutine of its own,
// unless reading the threads failed (dst.err), and returns a channel
// closed when it is done. Call with m.mu held; the goroutine takes it to
// fill dst.
func (m *cpuMeter) scanProcs(dst *taskSample) chan struct{} {
	done, terr := make(chan struct{}), dst.err
	go func() {
		defer close(done)
		if terr != nil {
			return
		}
		at := time.Now()
		procs, err := measure.ReadProcesses(m.procRoot)
		m.mu.Lock()
		dst.procs, dst.procsAt, dst.err = procs, at, err
		m.mu.Unlock()
	}()
	return done
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
	m.tasks0.threads, m.tasks0.err = measure.ReadThreads(m.procRoot, m.pid)
	// Every other process on a goroutine of its own, timed on its own: on
	// a loaded host the scan can take a good part of a short window, which
	// a scan before the /proc/stat sample took out of the CPU figures'
	// window (TestCPUOnLoopback saw 17 ms of 300).
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
	// This process's threads now, while the loops' threads still exist;
	// every other process on a goroutine of its own, while the loops stop
	// and the peer reaches its end of stream: result waits for it.
	m.tasks1.threads, m.tasks1.err = measure.ReadThreads(m.procRoot, m.pid)
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
			c.Threads = measure.TaskDelta(m.tasks0.threads, m.tasks1.threads, elapsed).Busiest
			for _, th := range c.Threads {
				sh, ok := usage.SharesOf(th.LastCPU)
				if ok && th.LastCPU != usage.BusiestCPU && !slices.ContainsFunc(c.ThreadCPUShares, func(s measure.CPUShares) bool { return s.CPU == sh.CPU }) {
					c.ThreadCPUShares = append(c.ThreadCPUShares, sh)
				}
			}
			others := measure.TaskDelta(m.tasks0.procs, m.tasks1.procs, m.tasks1.procsAt.Sub(m.tasks0.procsAt).Seconds(), m.pid)
			c.OtherProcessesUtilPct, c.OtherProcesses = others.UtilPct, others.Busiest
		}
		res.CPU = &c
	}
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
