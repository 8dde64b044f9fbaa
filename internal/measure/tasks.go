package measure

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Processes and threads are sampled from <proc root>/PID/stat and
// <proc root>/PID/task/TID/stat at the start and end of a window
// (ReadProcesses, ReadThreads) and compared with TaskDelta: which of this
// process's threads did the work, and how much CPU other processes took
// meanwhile. As with /proc/stat, nothing here reads a clock.

// TicksPerSecond is USER_HZ, the unit of the times in /proc/PID/stat:
// 100 on every Linux architecture, whatever the kernel's HZ.
const TicksPerSecond = 100

// TaskTimes is one process's or thread's CPU time since it started.
type TaskTimes struct {
	ID          int
	Name        string // comm, the kernel's 15-byte name
	UserTicks   uint64 // utime
	SystemTicks uint64 // stime
	LastCPU     int    // processor: the CPU it last ran on
	// Kernel is set for kernel threads (PF_KTHREAD).
	Kernel bool
	// RunNanos and WaitNanos are the time it spent on a CPU and runnable
	// but waiting for one, from its schedstat (threads only; 0 where the
	// kernel has no schedstat). RunNanos is exact where the ticks of
	// utime and stime are samples: a thread that runs in bursts shorter
	// than a tick can show none.
	RunNanos, WaitNanos uint64
}

// Tasks is the tasks present at one moment, by id.
type Tasks map[int]TaskTimes

// pfKThread is PF_KTHREAD in a task's flags (include/linux/sched.h).
const pfKThread = 0x00200000

// maxTaskStat bounds one /proc/PID/stat file; real ones are under 1 KiB.
const maxTaskStat = 4096

// ReadProcesses reads every process's CPU time under procRoot. Processes
// that end while it reads, or whose stat cannot be read, are left out;
// only an unreadable procRoot is an error.
func ReadProcesses(procRoot string) (Tasks, error) {
	return readTasks(procRoot, false)
}

// ReadThreads reads the CPU time of each thread of process pid.
func ReadThreads(procRoot string, pid int) (Tasks, error) {
	return readTasks(filepath.Join(procRoot, strconv.Itoa(pid), "task"), true)
}

func readTasks(dir string, schedstat bool) (Tasks, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("read tasks: %w", err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read tasks in %s: %w", dir, err)
	}
	ts := make(Tasks, len(names))
	buf := make([]byte, maxTaskStat)
	for _, n := range names {
		id, err := strconv.Atoi(n)
		if err != nil || id <= 0 {
			continue
		}
		t, err := readTaskStat(filepath.Join(dir, n, "stat"), buf)
		if err != nil {
			continue // ended since the listing, or not ours to read
		}
		t.ID = id
		if schedstat {
			t.RunNanos, t.WaitNanos = readSchedstat(filepath.Join(dir, n, "schedstat"), buf)
		}
		ts[id] = t
	}
	return ts, nil
}

func readTaskStat(path string, buf []byte) (TaskTimes, error) {
	n, err := readSmallFile(path, buf)
	if err != nil {
		return TaskTimes{}, err
	}
	return parseTaskStat(buf[:n])
}

// readSmallFile reads the file at path into buf, up to its length, and
// returns how much it read. A scan reads two of these per task, hundreds
// per scan: on Linux they are plain open, read and close calls
// (procread_linux.go), without the fstat and the poller registration of
// os.Open, which once made a scan of every process cost 35 us a process.
func readSmallFile(path string, buf []byte) (int, error) { return readSmall(path, buf) }

// readSchedstat reads a task's schedstat ("run_ns wait_ns timeslices"):
// zeros when it cannot.
func readSchedstat(path string, buf []byte) (run, wait uint64) {
	n, err := readSmallFile(path, buf)
	if err != nil {
		return 0, 0
	}
	b := buf[:n]
	f0, rest := nextField(b)
	f1, _ := nextField(rest)
	r, ok1 := parseDecimal(f0)
	w, ok2 := parseDecimal(f1)
	if !ok1 || !ok2 {
		return 0, 0
	}
	return r, w
}

// nextField returns the first space-separated field of b and what
// follows it, without allocating.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' }

// parseDecimal parses an unsigned decimal number, reporting false for
// anything else (empty, a sign, another character, an overflow).
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseTaskStat parses a /proc/PID/stat line: "pid (comm) state ppid ...".
// The name may hold spaces and parentheses, so the fields are counted
// from the last ')'. It walks the fields in place: a scan parses
// hundreds of lines.
func parseTaskStat(b []byte) (TaskTimes, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return TaskTimes{}, errors.New("no (comm) in a task's stat")
	}
	t := TaskTimes{Name: string(b[open+1 : end])}
	// Field 3 (state) is the first after the name: field n is the
	// (n-2)th.
	const flags, utime, stime, processor = 9, 14, 15, 39
	var fields [processor + 1][]byte
	rest := b[end+1:]
	got := 0
	for n := 3; n <= processor; n++ {
		var f []byte
		if f, rest = nextField(rest); len(f) == 0 {
			break
		}
		fields[n] = f
		got = n
	}
	if got < stime {
		return TaskTimes{}, fmt.Errorf("a task's stat has %d fields after its name, want at least %d", max(0, got-2), stime-2)
	}
	num := func(n int, what string) (uint64, error) {
		v, ok := parseDecimal(fields[n])
		if !ok {
			return 0, fmt.Errorf("task %s: %q is not a number", what, fields[n])
		}
		return v, nil
	}
	fl, err := num(flags, "flags")
	if err != nil {
		return TaskTimes{}, err
	}
	if t.UserTicks, err = num(utime, "utime"); err != nil {
		return TaskTimes{}, err
	}
	if t.SystemTicks, err = num(stime, "stime"); err != nil {
		return TaskTimes{}, err
	}
	t.Kernel = fl&pfKThread != 0
	t.LastCPU = -1
	if got >= processor {
		if c, ok := parseDecimal(fields[processor]); ok {
			t.LastCPU = int(c)
		}
	}
	return t, nil
}

// TaskUsage is what tasks used between two samples.
type TaskUsage struct {
	// UtilPct is the time all the tasks counted used, in percent of one
	// CPU over the window, from their ticks.
	UtilPct float64
	// Busiest is the tasks that wanted the most CPU (used plus waited
	// for), busiest first, at most MaxTasks of them.
	Busiest []TaskCPU
}

// TaskDelta is the CPU time tasks used between samples a and b, over a
// window of elapsedS seconds. A task only in b started during the window
// and counts all its time; one only in a ended and is lost (its time
// went to its parent's cumulative figures, which stat does not show).
// Kernel threads and the ids in skip are left out.
func TaskDelta(a, b Tasks, elapsedS float64, skip ...int) TaskUsage {
	var u TaskUsage
	if elapsedS <= 0 {
		return u
	}
	var all []TaskCPU
	var ticks uint64
	for id, t := range b {
		if t.Kernel || slices.Contains(skip, id) {
			continue
		}
		user, sys := t.UserTicks, t.SystemTicks
		if p, ok := a[id]; ok && p.UserTicks+p.SystemTicks <= user+sys {
			// The same task (an id reused within the window would have
			// less time than the one it replaced, and counts whole).
			user, sys = sub(user, p.UserTicks), sub(sys, p.SystemTicks)
		}
		runNs, wait := t.RunNanos, t.WaitNanos
		if p, ok := a[id]; ok && p.WaitNanos <= wait && p.RunNanos <= runNs {
			runNs, wait = runNs-p.RunNanos, wait-p.WaitNanos
		}
		if user+sys == 0 && wait == 0 && runNs == 0 {
			continue
		}
		ticks += user + sys
		util := 100 * float64(user+sys) / TicksPerSecond / elapsedS
		if t.RunNanos > 0 {
			util = 100 * float64(runNs) / 1e9 / elapsedS
		}
		all = append(all, TaskCPU{
			ID:      id,
			Name:    t.Name,
			UserS:   float64(user) / TicksPerSecond,
			SystemS: float64(sys) / TicksPerSecond,
			UtilPct: util,
			LastCPU: t.LastCPU,
			WaitPct: 100 * float64(wait) / 1e9 / elapsedS,
		})
	}
	u.UtilPct = 100 * float64(ticks) / TicksPerSecond / elapsedS
	// Busiest first by the CPU each wanted: what it used and, for a
	// thread, the time it waited for a CPU on top.
	slices.SortFunc(all, func(x, y TaskCPU) int {
		if c := cmp.Compare(y.UtilPct+y.WaitPct, x.UtilPct+x.WaitPct); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	if len(all) > MaxTasks {
		all = all[:MaxTasks]
	}
	u.Busiest = all
	return u
}
