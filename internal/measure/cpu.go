package measure

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPU utilization is sampled system-wide from <proc root>/stat at the start
// and end of a window (ReadCPU, CPUDelta) together with this process's own
// CPU time (ReadProcessCPU, ProcessCPU.Sub); CPUResult joins them into the
// results document's CPU. Callers take each sample at the agreed
// moments with the monotonic clock; nothing here reads a clock.

// CPUTimes is the time one CPU, or all of them together, has spent in each
// state since boot, as /proc/stat counts it: in USER_HZ ticks (1/100 s
// on Linux). Guest and GuestNice are already included in User and Nice.
// Fields an old kernel does not report are 0: iowait, irq and softirq
// appeared in 2.6.0, steal in 2.6.11, guest in 2.6.24, guest_nice in
// 2.6.33.
type CPUTimes struct {
	// CPU is the kernel's CPU number, or -1 for the sum over all CPUs
	// (the "cpu" line).
	CPU       int
	User      uint64
	Nice      uint64
	System    uint64
	Idle      uint64
	IOWait    uint64
	IRQ       uint64
	SoftIRQ   uint64
	Steal     uint64
	Guest     uint64
	GuestNice uint64
}

// Total is all the time counted, in ticks: every state except Guest and
// GuestNice, which User and Nice already include.
func (t CPUTimes) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// CPUSample is the CPU times in /proc/stat at one moment.
type CPUSample struct {
	// All is the "cpu" line: the sum over all CPUs.
	All CPUTimes
	// PerCPU has one entry per "cpuN" line, in the kernel's order. Offline
	// CPUs have no line, so CPU numbers can skip.
	PerCPU []CPUTimes
}

// DefaultProcRoot is where procfs is mounted on a live Linux system: the
// default of every proc root setting, which callers pass down to ReadCPU.
const DefaultProcRoot = "/proc"

// ReadCPU reads the CPU times from <procRoot>/stat; procRoot is "/proc" on
// a live system and a fixture tree in tests. It stops reading at the end of
// the cpu lines. On platforms without /proc/stat the error wraps both
// ErrUnsupported and fs.ErrNotExist.
func ReadCPU(procRoot string) (CPUSample, error) {
	path := filepath.Join(procRoot, "stat")
	f, err := os.Open(path)
	if err != nil {
		return CPUSample{}, fmt.Errorf("read cpu times: %w", statUnavailable(err))
	}
	defer f.Close()
	s, err := parseCPU(f)
	if err != nil {
		return CPUSample{}, fmt.Errorf("read cpu times from %s: %w", path, err)
	}
	return s, nil
}

// maxStatLine bounds one line of /proc/stat. The cpu lines are short; the
// bound only matters for a file that is not /proc/stat at all.
const maxStatLine = 1 << 20

// parseCPU parses the cpu lines of a /proc/stat file: "cpu" then "cpuN"
// lines, each with at least user, nice, system and idle. Lines before the
// first cpu line are skipped; reading stops at the first line after them
// that is not a cpu line. Extra fields from newer kernels are ignored.
func parseCPU(r io.Reader) (CPUSample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxStatLine)
	var (
		s       CPUSample
		haveAll bool
		inCPU   bool
		seen    = map[int]bool{}
		lineNo  int
	)
	for sc.Scan() {
		lineNo++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			if inCPU {
				break
			}
			continue
		}
		inCPU = true
		t, err := parseCPULine(fields)
		if err != nil {
			return CPUSample{}, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if t.CPU < 0 {
			if haveAll {
				return CPUSample{}, fmt.Errorf("line %d: second \"cpu\" line", lineNo)
			}
			s.All, haveAll = t, true
			continue
		}
		if seen[t.CPU] {
			return CPUSample{}, fmt.Errorf("line %d: cpu%d listed twice", lineNo, t.CPU)
		}
		seen[t.CPU] = true
		s.PerCPU = append(s.PerCPU, t)
	}
	if err := sc.Err(); err != nil {
		return CPUSample{}, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if !haveAll {
		return CPUSample{}, fmt.Errorf("no \"cpu\" line: not a /proc/stat file")
	}
	return s, nil
}

// minCPUFields is user, nice, system and idle, all that Linux 2.4 gave.
const minCPUFields = 4

func parseCPULine(fields []string) (CPUTimes, error) {
	t := CPUTimes{CPU: -1}
	name := fields[0]
	if name != "cpu" {
		n, err := strconv.Atoi(strings.TrimPrefix(name, "cpu"))
		if err != nil || n < 0 {
			return CPUTimes{}, fmt.Errorf("%q is not a cpu name: want \"cpu\" or \"cpuN\"", name)
		}
		t.CPU = n
	}
	vals := fields[1:]
	if len(vals) < minCPUFields {
		return CPUTimes{}, fmt.Errorf("%s has %d values, want at least %d (user nice system idle)", name, len(vals), minCPUFields)
	}
	dst := []*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal, &t.Guest, &t.GuestNice}
	for i, v := range vals {
		if i == len(dst) {
			break
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return CPUTimes{}, fmt.Errorf("%s value %d is %q, want a count of ticks", name, i+1, v)
		}
		*dst[i] = n
	}
	return t, nil
}

// CPUUsage is the share of CPU time in each state between two samples,
// in percent of all CPU time counted over the window. Utilization is
// everything but idle and iowait: iowait is idle time while I/O is
// outstanding, so it is reported apart and not counted as busy. Steal is
// counted as busy: the CPU was wanted, though the hypervisor ran
// something else.
type CPUUsage struct {
	UtilPct    float64
	UserPct    float64 // includes guest
	NicePct    float64 // includes guest_nice
	SystemPct  float64
	IRQPct     float64
	SoftIRQPct float64
	IOWaitPct  float64
	StealPct   float64
	IdlePct    float64
	// Ticks is the CPU time counted over the window, summed over all
	// CPUs, in USER_HZ ticks. It is the resolution of the percentages;
	// when it is 0 (a window shorter than a tick) they are all 0.
	Ticks uint64
	// PerCPU is each CPU present in both samples, in the later sample's
	// order.
	PerCPU []CPUUtil
	// BusiestCPU is the kernel's number of the CPU with the highest
	// utilization (the lowest number on a tie), -1 when there are no
	// per-CPU figures; BusiestCPUPct is its utilization.
	BusiestCPU    int
	BusiestCPUPct float64
	// BusiestShares is the busiest CPU's time split by state.
	BusiestShares CPUShares
	// PerCPUShares is each CPU's split, in PerCPU's order.
	PerCPUShares []CPUShares
}

// SharesOf is the split of CPU id, false when the usage has no such CPU.
func (u CPUUsage) SharesOf(id int) (CPUShares, bool) {
	for i, c := range u.PerCPU {
		if c.CPU == id && i < len(u.PerCPUShares) {
			return u.PerCPUShares[i], true
		}
	}
	return CPUShares{}, false
}

// CPUUtil is one CPU's utilization over a window.
type CPUUtil struct {
	CPU     int // the kernel's CPU number
	UtilPct float64
}

// CPUs is the number of CPUs the usage covers: those in both samples.
func (u CPUUsage) CPUs() int { return len(u.PerCPU) }

// CPUDelta is the CPU usage between sample a and the later sample b. A
// counter that went backwards (iowait can, on some kernels) counts as 0.
// A CPU present in only one sample (hotplug) is left out of PerCPU.
//
// The all-CPU figures are the sum of the per-CPU lines of the CPUs in both
// samples, not the "cpu" line: the kernel writes that line and the per-CPU
// ones in two passes over the CPUs, so over a short window they can
// disagree by a tick, and the average could then exceed the busiest CPU.
// Only samples without per-CPU lines fall back to the "cpu" line.
func CPUDelta(a, b CPUSample) CPUUsage {
	prev := make(map[int]CPUTimes, len(a.PerCPU))
	for _, t := range a.PerCPU {
		prev[t.CPU] = t
	}
	var all CPUTimes
	var per []CPUUsage
	for _, t := range b.PerCPU {
		p, ok := prev[t.CPU]
		if !ok {
			continue
		}
		d := delta(p, t)
		all = all.add(d)
		sh := percentages(d)
		sh.BusiestCPU = t.CPU // this CPU's number, for the loop below
		per = append(per, sh)
	}
	var u CPUUsage
	if len(per) > 0 {
		u = percentages(all)
	} else {
		u = percentages(delta(a.All, b.All))
	}
	u.BusiestCPU = -1
	for _, sh := range per {
		c := CPUUtil{CPU: sh.BusiestCPU, UtilPct: sh.UtilPct}
		u.PerCPU = append(u.PerCPU, c)
		split := CPUShares{CPU: c.CPU, UtilPct: sh.UtilPct, UserPct: sh.UserPct, NicePct: sh.NicePct,
			SystemPct: sh.SystemPct, IRQPct: sh.IRQPct, SoftIRQPct: sh.SoftIRQPct, StealPct: sh.StealPct}
		u.PerCPUShares = append(u.PerCPUShares, split)
		if u.BusiestCPU < 0 || c.UtilPct > u.BusiestCPUPct ||
			(c.UtilPct == u.BusiestCPUPct && c.CPU < u.BusiestCPU) {
			u.BusiestCPU, u.BusiestCPUPct = c.CPU, c.UtilPct
			u.BusiestShares = split
		}
	}
	return u
}

// delta is the ticks counted in each state between a and the later b.
func delta(a, b CPUTimes) CPUTimes {
	return CPUTimes{
		User:    sub(b.User, a.User),
		Nice:    sub(b.Nice, a.Nice),
		System:  sub(b.System, a.System),
		Idle:    sub(b.Idle, a.Idle),
		IOWait:  sub(b.IOWait, a.IOWait),
		IRQ:     sub(b.IRQ, a.IRQ),
		SoftIRQ: sub(b.SoftIRQ, a.SoftIRQ),
		Steal:   sub(b.Steal, a.Steal),
	}
}

// add sums two tick counts state by state.
func (t CPUTimes) add(o CPUTimes) CPUTimes {
	return CPUTimes{
		CPU: -1, User: t.User + o.User, Nice: t.Nice + o.Nice, System: t.System + o.System,
		Idle: t.Idle + o.Idle, IOWait: t.IOWait + o.IOWait, IRQ: t.IRQ + o.IRQ,
		SoftIRQ: t.SoftIRQ + o.SoftIRQ, Steal: t.Steal + o.Steal,
	}
}

// percentages turns tick counts into shares of their total.
func percentages(d CPUTimes) CPUUsage {
	total := d.Total()
	u := CPUUsage{Ticks: total}
	if total == 0 {
		return u
	}
	pct := func(n uint64) float64 { return 100 * float64(n) / float64(total) }
	u.UserPct = pct(d.User)
	u.NicePct = pct(d.Nice)
	u.SystemPct = pct(d.System)
	u.IRQPct = pct(d.IRQ)
	u.SoftIRQPct = pct(d.SoftIRQ)
	u.IOWaitPct = pct(d.IOWait)
	u.StealPct = pct(d.Steal)
	u.IdlePct = pct(d.Idle)
	u.UtilPct = pct(total - d.Idle - d.IOWait)
	return u
}

func sub(b, a uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// ProcessCPU is CPU time used by this process, all threads, in user and
// kernel mode: since it started when read by ReadProcessCPU, over a window
// when made by Sub.
type ProcessCPU struct {
	User   time.Duration
	System time.Duration
}

// ReadProcessCPU reads this process's CPU time from getrusage(RUSAGE_SELF).
// On platforms other than Linux it returns ErrUnsupported.
func ReadProcessCPU() (ProcessCPU, error) {
	return readProcessCPU()
}

// Sub is the CPU time used between the earlier sample q and p.
func (p ProcessCPU) Sub(q ProcessCPU) ProcessCPU {
	return ProcessCPU{User: p.User - q.User, System: p.System - q.System}
}

// CPUResult fills one side's CPU from the system-wide usage and the
// process's CPU time over the same window. elapsedS is the window's
// length in seconds by the monotonic clock and bytes the payload this side
// moved in it, for the service demand. The service demand is 0 when no
// bytes moved or when the samples had no per-CPU lines to count CPUs by.
func CPUResult(u CPUUsage, proc ProcessCPU, elapsedS float64, bytes int64) CPU {
	c := CPU{
		UtilPct:        u.UtilPct,
		UserPct:        u.UserPct,
		NicePct:        u.NicePct,
		SystemPct:      u.SystemPct,
		IRQPct:         u.IRQPct,
		SoftIRQPct:     u.SoftIRQPct,
		IOWaitPct:      u.IOWaitPct,
		StealPct:       u.StealPct,
		IdlePct:        u.IdlePct,
		CPUs:           u.CPUs(),
		BusiestCPU:     u.BusiestCPU,
		BusiestCPUPct:  u.BusiestCPUPct,
		PerCPUUtilPct:  make([]float64, 0, len(u.PerCPU)),
		PerCPUIDs:      make([]int, 0, len(u.PerCPU)),
		ProcessUserS:   proc.User.Seconds(),
		ProcessSystemS: proc.System.Seconds(),
		ElapsedS:       elapsedS,
	}
	if u.BusiestCPU >= 0 {
		sh := u.BusiestShares
		c.BusiestCPUShares = &sh
	}
	for _, p := range u.PerCPU {
		c.PerCPUUtilPct = append(c.PerCPUUtilPct, p.UtilPct)
		c.PerCPUIDs = append(c.PerCPUIDs, p.CPU)
	}
	c.ServiceDemandMicrosPerKB = ServiceDemand(u.UtilPct, c.CPUs, elapsedS, bytes)
	c.OtherProcessesHostUtilPct = HostOthersPct(u, proc, elapsedS)
	return c
}

// HostOthersPct is the CPU time the host spent in user, nice and system
// mode over a window of elapsedS seconds beyond proc, this process's own
// over the same window, in percent of one CPU (200 is two CPUs' worth);
// 0 when it is not positive or the usage counted no ticks. Interrupt,
// softirq and steal time are not counted: the first two are mostly the
// test's packets, the last is not this host's at all.
func HostOthersPct(u CPUUsage, proc ProcessCPU, elapsedS float64) float64 {
	if u.Ticks == 0 || elapsedS <= 0 {
		return 0
	}
	hostS := (u.UserPct + u.NicePct + u.SystemPct) / 100 * float64(u.Ticks) / TicksPerSecond
	return max(100*(hostS-(proc.User+proc.System).Seconds())/elapsedS, 0)
}
