package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultSysRoot is where sysfs is mounted on a live system.
const DefaultSysRoot = "/sys"

// IdleSample is how long each CPU has been idle, to the microsecond, from
// the kernel's cpuidle residency counters
// (<sysRoot>/devices/system/cpu/cpuN/cpuidle/stateK/time, summed over the
// states), and this process's CPU time, at one moment. /proc/stat counts
// in ticks of 10 ms, so a baseline from it needs a window of a fifth of a
// second to mean anything (BaselineOf); from residencies, a window of a
// few milliseconds is exact.
//
// A CPU's residency counter moves when the CPU leaves an idle state: read
// while the CPU sleeps, it leaves out the sleep in progress. ReadIdle
// therefore first has wake end every CPU's sleep (on a live system by
// moving a thread onto each CPU in turn), then reads the counters.
type IdleSample struct {
	CPUs []CPUIdle
	// Process is this process's CPU time (getrusage) as the sample ended.
	Process ProcessCPU
}

// CPUIdle is one CPU's idle residency and when it was read.
type CPUIdle struct {
	CPU  int
	At   time.Time
	Idle time.Duration
}

// ReadOnlineCPUs reads the online CPUs from <sysRoot>/devices/system/cpu/online
// ("0-3,6").
func ReadOnlineCPUs(sysRoot string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(sysRoot, "devices/system/cpu/online"))
	if err != nil {
		return nil, fmt.Errorf("online cpus: %w", err)
	}
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("online cpus %q: %w", b, err)
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a {
				return nil, fmt.Errorf("online cpus %q: bad range %q", b, part)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("online cpus: none listed")
	}
	return cpus, nil
}

// ReadIdle reads the idle residency of each of cpus, then this process's
// CPU time. When wake is not nil it is called first: it ends each CPU's
// sleep in progress and returns, for each CPU, when it did, the time the
// CPU's reading is taken at (a CPU that goes back to sleep between its
// wake and its read leaves those microseconds out); without wake each
// CPU's reading is timed as it is read. A CPU without cpuidle states (no
// cpuidle driver: idle=poll, some virtual machines) is an error wrapping
// fs.ErrNotExist: the caller falls back to /proc/stat.
func ReadIdle(sysRoot string, cpus []int, wake func(cpus []int) ([]time.Time, error)) (IdleSample, error) {
	var woken []time.Time
	if wake != nil {
		var err error
		if woken, err = wake(cpus); err != nil {
			return IdleSample{}, err
		}
		if len(woken) != len(cpus) {
			return IdleSample{}, fmt.Errorf("cpu idle residency: %d cpus woken of %d", len(woken), len(cpus))
		}
	}
	s := IdleSample{CPUs: make([]CPUIdle, 0, len(cpus))}
	buf := make([]byte, 32)
	for i, c := range cpus {
		at := time.Now()
		if woken != nil {
			at = woken[i]
		}
		idle, err := readResidency(filepath.Join(sysRoot, "devices/system/cpu", "cpu"+strconv.Itoa(c), "cpuidle"), buf)
		if err != nil {
			return IdleSample{}, err
		}
		s.CPUs = append(s.CPUs, CPUIdle{CPU: c, At: at, Idle: idle})
	}
	p, err := ReadProcessCPU()
	if err != nil {
		return IdleSample{}, err
	}
	s.Process = p
	return s, nil
}

// readResidency sums the time of every state under dir (a CPU's cpuidle
// directory), in microseconds.
func readResidency(dir string, buf []byte) (time.Duration, error) {
	var sum time.Duration
	for k := 0; ; k++ {
		f, err := os.Open(filepath.Join(dir, "state"+strconv.Itoa(k), "time"))
		if err != nil {
			if k == 0 {
				return 0, fmt.Errorf("cpu idle residency: %w", err)
			}
			return sum, nil
		}
		n, err := f.Read(buf)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("cpu idle residency: %w", err)
		}
		us, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu idle residency %s: %w", dir, err)
		}
		sum += time.Duration(us) * time.Microsecond
	}
}

// BaselineOfIdle is the baseline between two idle samples of the same
// CPUs: the share of the CPUs' time that was not idle, less this
// process's own CPU time over the window (the session's set-up, the
// sampling itself), so that what is left is the rest of the host's.
// Its window is the mean over the CPUs of the time between their two
// readings.
func BaselineOfIdle(before, after IdleSample) (CPUBaseline, error) {
	if len(before.CPUs) == 0 || len(before.CPUs) != len(after.CPUs) {
		return CPUBaseline{}, fmt.Errorf("cpu baseline: %d and %d cpus sampled", len(before.CPUs), len(after.CPUs))
	}
	var total, idle time.Duration
	for i, a := range before.CPUs {
		b := after.CPUs[i]
		if a.CPU != b.CPU {
			return CPUBaseline{}, fmt.Errorf("cpu baseline: cpu %d sampled against cpu %d", b.CPU, a.CPU)
		}
		el := b.At.Sub(a.At)
		total += el
		idle += min(max(b.Idle-a.Idle, 0), el)
	}
	if total <= 0 {
		return CPUBaseline{}, fmt.Errorf("cpu baseline: an empty window")
	}
	own := after.Process.Sub(before.Process)
	busy := max(total-idle-own.User-own.System, 0)
	return CPUBaseline{
		UtilPct: 100 * float64(busy) / float64(total),
		WindowS: (total / time.Duration(len(before.CPUs))).Seconds(),
		Source:  BaselineIdleResidency,
	}, nil
}
