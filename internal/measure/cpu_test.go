package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"wirespeed/internal/testkit"
)

// approx compares percentages computed from tick counts: exact up to
// floating-point rounding.
var approx = cmpopts.EquateApprox(0, 1e-9)

func fixture(name string) string { return filepath.Join("testdata", "cpu", name) }

func fixtureRoot(name string) string { return filepath.Join("testdata", name) }

func TestReadCPU(t *testing.T) {
	tests := []struct {
		name    string
		root    string
		want    CPUSample
		wantErr error // checked with errors.Is when not nil
	}{
		{
			name: "all fields, two cpus",
			root: fixture("guest-a"),
			want: CPUSample{
				All: CPUTimes{CPU: -1, User: 10000, Nice: 200, System: 3000, Idle: 80000, IOWait: 500,
					IRQ: 100, SoftIRQ: 400, Steal: 50, Guest: 1000, GuestNice: 20},
				PerCPU: []CPUTimes{
					{CPU: 0, User: 6000, Nice: 100, System: 2000, Idle: 39000, IOWait: 300,
						IRQ: 60, SoftIRQ: 300, Steal: 25, Guest: 600, GuestNice: 10},
					{CPU: 1, User: 4000, Nice: 100, System: 1000, Idle: 41000, IOWait: 200,
						IRQ: 40, SoftIRQ: 100, Steal: 25, Guest: 400, GuestNice: 10},
				},
			},
		},
		{
			name: "linux 2.6.0: no steal or guest",
			root: fixture("linux26-a"),
			want: CPUSample{
				All:    CPUTimes{CPU: -1, User: 1000, System: 500, Idle: 8000, IOWait: 100, IRQ: 10, SoftIRQ: 20},
				PerCPU: []CPUTimes{{CPU: 0, User: 1000, System: 500, Idle: 8000, IOWait: 100, IRQ: 10, SoftIRQ: 20}},
			},
		},
		{
			name: "linux 2.4: four fields, cpu1 offline",
			root: fixture("linux24-offline-a"),
			want: CPUSample{
				All: CPUTimes{CPU: -1, User: 300, System: 100, Idle: 1600},
				PerCPU: []CPUTimes{
					{CPU: 0, User: 200, System: 50, Idle: 750},
					{CPU: 2, User: 100, System: 50, Idle: 850},
				},
			},
		},
		{name: "no such root", root: fixture("missing"), wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadCPU(tt.root)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ReadCPU(%q) error = %v, want %v", tt.root, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadCPU(%q): %v", tt.root, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadCPU(%q) mismatch (-want +got):\n%s", tt.root, diff)
			}
		})
	}
}

func TestCPUDelta(t *testing.T) {
	tests := []struct {
		name string
		a, b string // fixture names
		want CPUUsage
	}{
		{
			// Deltas from guest-a to guest-b, in ticks:
			//            user nice system idle iowait irq softirq steal guest guest_nice
			//   cpu       400   20    150  330     30  10      50    10   100         20
			//   cpu0      300    0    100   50      0  10      40     0   100          0
			//   cpu1      100   20     50  280     30   0      10    10     0         20
			// Total is 1000 ticks without guest, which is inside user and
			// nice (with it, 1120, and user would read 44.6%). So each tick
			// is 0.1%: user 40, nice 2, system 15, idle 33, iowait 3, irq
			// 1, softirq 5, steal 1; utilization 100 - 33 - 3 = 64.
			// cpu0: 500 ticks, 50 idle: 90%. cpu1: 500 ticks, 280 idle and
			// 30 iowait: 190/500 = 38%. cpu0's split, of its 500 ticks:
			// user 60, system 20, irq 2, softirq 8.
			name: "two cpus with guest time",
			a:    "guest-a", b: "guest-b",
			want: CPUUsage{
				UtilPct: 64, UserPct: 40, NicePct: 2, SystemPct: 15, IRQPct: 1, SoftIRQPct: 5,
				IOWaitPct: 3, StealPct: 1, IdlePct: 33, Ticks: 1000,
				PerCPU:     []CPUUtil{{CPU: 0, UtilPct: 90}, {CPU: 1, UtilPct: 38}},
				BusiestCPU: 0, BusiestCPUPct: 90,
				BusiestShares: CPUShares{UtilPct: 90, UserPct: 60, SystemPct: 20, IRQPct: 2, SoftIRQPct: 8},
				// cpu1, of its 500 ticks: user 100, nice 20, system 50,
				// softirq 10, steal 10.
				PerCPUShares: []CPUShares{{UtilPct: 90, UserPct: 60, SystemPct: 20, IRQPct: 2, SoftIRQPct: 8},
					{CPU: 1, UtilPct: 38, UserPct: 20, NicePct: 4, SystemPct: 10, SoftIRQPct: 2, StealPct: 2}},
			},
		},
		{
			// One cpu, 7 fields: deltas user 50, system 25, idle 20,
			// iowait 3, irq 1, softirq 1 = 100 ticks, so percent = ticks;
			// utilization 100 - 20 - 3 = 77.
			name: "linux 2.6.0, one cpu",
			a:    "linux26-a", b: "linux26-b",
			want: CPUUsage{
				UtilPct: 77, UserPct: 50, SystemPct: 25, IRQPct: 1, SoftIRQPct: 1,
				IOWaitPct: 3, IdlePct: 20, Ticks: 100,
				PerCPU:     []CPUUtil{{CPU: 0, UtilPct: 77}},
				BusiestCPU: 0, BusiestCPUPct: 77,
				BusiestShares: CPUShares{UtilPct: 77, UserPct: 50, SystemPct: 25, IRQPct: 1, SoftIRQPct: 1},
				PerCPUShares:  []CPUShares{{UtilPct: 77, UserPct: 50, SystemPct: 25, IRQPct: 1, SoftIRQPct: 1}},
			},
		},
		{
			// 4 fields, cpus 0 and 2: deltas user 160, system 35, idle 205
			// of 400 ticks: 40%, 8.75%, 51.25%, utilization 48.75%.
			// cpu0: 150+25 busy of 200 = 87.5% (75 user, 12.5 system);
			// cpu2: 10+10 of 200 = 10%.
			name: "linux 2.4, cpu1 offline",
			a:    "linux24-offline-a", b: "linux24-offline-b",
			want: CPUUsage{
				UtilPct: 48.75, UserPct: 40, SystemPct: 8.75, IdlePct: 51.25, Ticks: 400,
				PerCPU:     []CPUUtil{{CPU: 0, UtilPct: 87.5}, {CPU: 2, UtilPct: 10}},
				BusiestCPU: 0, BusiestCPUPct: 87.5,
				BusiestShares: CPUShares{UtilPct: 87.5, UserPct: 75, SystemPct: 12.5},
				PerCPUShares:  []CPUShares{{UtilPct: 87.5, UserPct: 75, SystemPct: 12.5}, {CPU: 2, UtilPct: 10, UserPct: 5, SystemPct: 5}},
			},
		},
		{
			// A window shorter than a tick: nothing to divide by.
			name: "no ticks elapsed",
			a:    "guest-a", b: "guest-a",
			want: CPUUsage{
				PerCPU:       []CPUUtil{{CPU: 0}, {CPU: 1}},
				BusiestCPU:   0,
				PerCPUShares: []CPUShares{{}, {CPU: 1}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ReadCPU(fixture(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			b, err := ReadCPU(fixture(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			got := CPUDelta(a, b)
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("CPUDelta(%s, %s) mismatch (-want +got):\n%s", tt.a, tt.b, diff)
			}
		})
	}
}

func TestCPUDeltaOddSamples(t *testing.T) {
	a := CPUSample{
		All: CPUTimes{CPU: -1, User: 100, Idle: 100, IOWait: 50},
		PerCPU: []CPUTimes{
			{CPU: 0, User: 50, Idle: 50, IOWait: 25},
			{CPU: 1, User: 50, Idle: 50, IOWait: 25},
		},
	}
	b := CPUSample{
		// iowait went backwards (NO_HZ kernels do this): counted as 0.
		All: CPUTimes{CPU: -1, User: 130, Idle: 170, IOWait: 40},
		// cpu1 went offline and cpu3 came online during the window.
		PerCPU: []CPUTimes{
			{CPU: 0, User: 80, Idle: 120, IOWait: 20},
			{CPU: 3, User: 1, Idle: 1},
		},
	}
	// 30 user + 70 idle = 100 ticks; cpu0: 30 busy of 100.
	want := CPUUsage{
		UtilPct: 30, UserPct: 30, IdlePct: 70, Ticks: 100,
		PerCPU:     []CPUUtil{{CPU: 0, UtilPct: 30}},
		BusiestCPU: 0, BusiestCPUPct: 30,
		BusiestShares: CPUShares{UtilPct: 30, UserPct: 30},
		PerCPUShares:  []CPUShares{{UtilPct: 30, UserPct: 30}},
	}
	if diff := cmp.Diff(want, CPUDelta(a, b), approx); diff != "" {
		t.Errorf("CPUDelta mismatch (-want +got):\n%s", diff)
	}
	if got := CPUDelta(CPUSample{}, CPUSample{}); got.BusiestCPU != -1 || got.CPUs() != 0 {
		t.Errorf("CPUDelta of empty samples: busiest %d, cpus %d; want -1, 0", got.BusiestCPU, got.CPUs())
	}
}

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    CPUSample
		wantErr string // a part of the message; "" for no error
	}{
		{
			name: "newer kernel with an eleventh field",
			in:   "cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu0 1 2 3 4 5 6 7 8 9 10 11\n",
			want: CPUSample{
				All:    CPUTimes{CPU: -1, User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, Guest: 9, GuestNice: 10},
				PerCPU: []CPUTimes{{CPU: 0, User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, Guest: 9, GuestNice: 10}},
			},
		},
		{
			name: "lines before the cpu block are skipped",
			in:   "\nheader 1 2\ncpu 1 2 3 4\nintr 1\ncpu9 not read after the block\n",
			want: CPUSample{All: CPUTimes{CPU: -1, User: 1, Nice: 2, System: 3, Idle: 4}},
		},
		{name: "empty", in: "", wantErr: `no "cpu" line`},
		{name: "no cpu lines", in: "intr 1 2 3\nctxt 4\n", wantErr: `no "cpu" line`},
		{name: "per-cpu only", in: "cpu0 1 2 3 4\n", wantErr: `no "cpu" line`},
		{name: "too few fields", in: "cpu  1 2 3\n", wantErr: "line 1: cpu has 3 values, want at least 4"},
		{name: "not a number", in: "cpu  1 2 3 4\ncpu0 1 2 x 4\n", wantErr: `line 2: cpu0 value 3 is "x", want a count of ticks`},
		{name: "negative", in: "cpu  1 -2 3 4\n", wantErr: `cpu value 2 is "-2"`},
		{name: "overflow", in: "cpu  1 2 3 99999999999999999999\n", wantErr: `cpu value 4 is "99999999999999999999"`},
		{name: "bad cpu name", in: "cpu  1 2 3 4\ncpuX 1 2 3 4\n", wantErr: `line 2: "cpuX" is not a cpu name`},
		{name: "negative cpu number", in: "cpu  1 2 3 4\ncpu-1 1 2 3 4\n", wantErr: `"cpu-1" is not a cpu name`},
		{name: "cpu twice", in: "cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu0 1 2 3 4\n", wantErr: "line 3: cpu0 listed twice"},
		{name: "aggregate twice", in: "cpu  1 2 3 4\ncpu  1 2 3 4\n", wantErr: `line 2: second "cpu" line`},
		{name: "line too long", in: "cpu  1 2 3 4" + strings.Repeat(" 0", maxStatLine) + "\n", wantErr: "line 1: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPU(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseCPU error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseCPU: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseCPU mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadCPUErrorNamesFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "stat"), []byte("cpu 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCPU(root)
	want := "read cpu times from " + filepath.Join(root, "stat") + ": line 1: cpu has 2 values, want at least 4 (user nice system idle)"
	if err == nil || err.Error() != want {
		t.Errorf("ReadCPU error = %v, want %q", err, want)
	}
}

// FuzzParseCPU checks that no input makes the parser panic, and that what
// it accepts is consistent.
func FuzzParseCPU(f *testing.F) {
	for _, name := range []string{"guest-a", "linux26-a", "linux24-offline-a"} {
		b, err := os.ReadFile(filepath.Join(fixture(name), "stat"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("cpu 1 2 3\n"))
	f.Add([]byte("cpu0 1 2 3 4\ncpu 1 2 3 4\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := parseCPU(bytes.NewReader(in))
		if err != nil {
			return
		}
		if s.All.CPU != -1 {
			t.Errorf("All.CPU = %d, want -1", s.All.CPU)
		}
		for _, c := range s.PerCPU {
			if c.CPU < 0 {
				t.Errorf("per-cpu entry with number %d", c.CPU)
			}
		}
		_ = CPUDelta(s, s)
	})
}

func TestServiceDemand(t *testing.T) {
	tests := []struct {
		name     string
		utilPct  float64
		cpus     int
		elapsedS float64
		bytes    int64
		want     float64
	}{
		{
			// 50% of 2 CPUs for 10 s is 10 CPU-seconds = 1e7 us, over
			// 1,000,000 KB: 10 us/KB.
			name: "round numbers", utilPct: 50, cpus: 2, elapsedS: 10, bytes: 1_000_000 * 1024, want: 10,
		},
		{
			// 25% of 4 CPUs for 10 s = 1e7 us; 10 GiB = 10,485,760 KB:
			// 1e7 / 10485760 = 0.953674 us/KB.
			name: "10 GiB in 10 s", utilPct: 25, cpus: 4, elapsedS: 10, bytes: 10 << 30, want: 0.95367431640625,
		},
		{
			// 64% of 2 CPUs for 5 s = 6.4e6 us; 5.875e9 bytes (9.4 Gbit/s)
			// = 5737304.6875 KB: 1.115506 us/KB.
			name: "fixture usage at 9.4 Gbit/s", utilPct: 64, cpus: 2, elapsedS: 5, bytes: 5_875_000_000, want: 6.4e6 / 5737304.6875,
		},
		{name: "nothing moved", utilPct: 50, cpus: 2, elapsedS: 10, bytes: 0, want: 0},
		{name: "no window", utilPct: 50, cpus: 2, elapsedS: 0, bytes: 1024, want: 0},
		{name: "no cpus", utilPct: 50, cpus: 0, elapsedS: 10, bytes: 1024, want: 0},
		{name: "idle", utilPct: 0, cpus: 2, elapsedS: 10, bytes: 1024, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ServiceDemand(tt.utilPct, tt.cpus, tt.elapsedS, tt.bytes)
			if math.Abs(got-tt.want) > 1e-9*math.Max(1, tt.want) {
				t.Errorf("ServiceDemand(%v, %d, %v, %d) = %v, want %v", tt.utilPct, tt.cpus, tt.elapsedS, tt.bytes, got, tt.want)
			}
		})
	}
}

// TestCPUResultGolden checks the JSON one side's CPU figures make in the
// results document, from the guest fixtures over a 5 s window that moved
// 5.875e9 bytes. go test ./internal/measure -update rewrites the file.
func TestCPUResultGolden(t *testing.T) {
	a, err := ReadCPU(fixture("guest-a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCPU(fixture("guest-b"))
	if err != nil {
		t.Fatal(err)
	}
	proc := ProcessCPU{User: 2500 * time.Millisecond, System: 1250 * time.Millisecond}
	got, err := json.MarshalIndent(CPUResult(CPUDelta(a, b), proc, 5, 5_875_000_000), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	testkit.Golden(t, filepath.Join("cpu", "result.json"), string(got))
}

func TestProcessCPUSub(t *testing.T) {
	a := ProcessCPU{User: time.Second, System: 200 * time.Millisecond}
	b := ProcessCPU{User: 1500 * time.Millisecond, System: 250 * time.Millisecond}
	want := ProcessCPU{User: 500 * time.Millisecond, System: 50 * time.Millisecond}
	if got := b.Sub(a); got != want {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
}

// sink keeps the busy loop's result alive so it is not optimized away.
var sink uint64

// burn spins the calling thread for d.
// burn spins until this process has used d more of user CPU time, or
// for at most limit of wall time: on a shared machine the thread may get
// only part of a CPU, and it is the CPU time the sampler must see.
func burn(d, limit time.Duration) {
	x := uint64(1)
	p0, _ := ReadProcessCPU()
	for end := time.Now().Add(limit); time.Now().Before(end); {
		for range 100000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if p, err := ReadProcessCPU(); err != nil || p.Sub(p0).User >= d {
			break
		}
	}
	sink = x
}

// TestCPULive burns one OS thread for 300 ms and checks that both the
// system-wide user time and this process's rusage saw it. The machine is
// shared, so the bounds are loose: other load can only add to them.
func TestCPULive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the live CPU sampler needs Linux /proc/stat and getrusage")
	}
	const spin = 300 * time.Millisecond
	sys0, err := ReadCPU("/proc")
	if err != nil {
		t.Fatal(err)
	}
	proc0, err := ReadProcessCPU()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		burn(spin, 20*spin)
		close(done)
	}()
	<-done
	sys1, err := ReadCPU("/proc")
	if err != nil {
		t.Fatal(err)
	}
	proc1, err := ReadProcessCPU()
	if err != nil {
		t.Fatal(err)
	}

	proc := proc1.Sub(proc0)
	if proc.User < spin/2 {
		t.Errorf("process user time rose by %v over a %v spin, want at least %v", proc.User, spin, spin/2)
	}
	// /proc/stat counts in USER_HZ ticks, 100 a second on Linux: the spin
	// is 30 ticks of user time somewhere on the machine. Tick sampling
	// and a busy host blur that, so ask for half.
	userTicks := (sys1.All.User + sys1.All.Nice) - (sys0.All.User + sys0.All.Nice)
	if userTicks < 15 {
		t.Errorf("system-wide user+nice time rose by %d ticks over a %v spin, want at least 15", userTicks, spin)
	}
	u := CPUDelta(sys0, sys1)
	if u.UtilPct <= 0 || u.Ticks == 0 {
		t.Errorf("CPUDelta: utilization %.2f%% over %d ticks, want both above 0", u.UtilPct, u.Ticks)
	}
	if u.CPUs() != runtime.NumCPU() {
		// Not an error: a container's cpuset can be smaller than the host.
		t.Logf("/proc/stat lists %d cpus, runtime.NumCPU is %d", u.CPUs(), runtime.NumCPU())
	}
	// The average is made of the per-CPU lines, so the busiest CPU is
	// never below it.
	if u.BusiestCPUPct < u.UtilPct-1e-9 {
		t.Errorf("busiest cpu at %.2f%% is below the average %.2f%%", u.BusiestCPUPct, u.UtilPct)
	}
	t.Logf("spin %v: process user %v system %v; system-wide util %.1f%% (user %.1f%%) over %d ticks, busiest cpu%d %.1f%%",
		spin, proc.User, proc.System, u.UtilPct, u.UserPct, u.Ticks, u.BusiestCPU, u.BusiestCPUPct)
}

// TestCPUDeltaFromPerCPULines feeds two samples whose "cpu" line disagrees
// with the sum of their per-CPU lines by a tick, as the kernel's two
// passes over the CPUs can make it: the all-CPU figures are the per-CPU
// sums, worked out by hand here, and the busiest CPU is not below them.
func TestCPUDeltaFromPerCPULines(t *testing.T) {
	a := CPUSample{
		All:    CPUTimes{CPU: -1, User: 100, System: 100, Idle: 200},
		PerCPU: []CPUTimes{{CPU: 0, User: 50, System: 50, Idle: 100}, {CPU: 1, User: 50, System: 50, Idle: 100}},
	}
	// Over the window: cpu0 busy 60 of 100 ticks (40 user, 20 system),
	// cpu1 busy 100 of 100 (100 system). Sum: 160 busy of 200 = 80%.
	// The "cpu" line says one more busy tick (161 of 200).
	b := CPUSample{
		All:    CPUTimes{CPU: -1, User: 141, System: 220, Idle: 240},
		PerCPU: []CPUTimes{{CPU: 0, User: 90, System: 70, Idle: 140}, {CPU: 1, User: 50, System: 150, Idle: 100}},
	}
	u := CPUDelta(a, b)
	if u.UtilPct != 80 || u.UserPct != 20 || u.SystemPct != 60 || u.IdlePct != 20 || u.Ticks != 200 {
		t.Errorf("util %.2f user %.2f system %.2f idle %.2f over %d ticks, want 80 20 60 20 over 200", u.UtilPct, u.UserPct, u.SystemPct, u.IdlePct, u.Ticks)
	}
	if u.BusiestCPU != 1 || u.BusiestCPUPct != 100 {
		t.Errorf("busiest cpu%d at %.2f%%, want cpu1 at 100%%", u.BusiestCPU, u.BusiestCPUPct)
	}
	// Without per-CPU lines, the "cpu" line is all there is.
	a.PerCPU, b.PerCPU = nil, nil
	if u := CPUDelta(a, b); u.Ticks != 201 || u.BusiestCPU != -1 {
		t.Errorf("without per-cpu lines: %d ticks, busiest %d; want the cpu line's 201 and -1", u.Ticks, u.BusiestCPU)
	}
}
