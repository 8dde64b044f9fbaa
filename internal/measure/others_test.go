package measure

import (
	"math"
	"testing"
	"time"
)

// TestHostOthersPct holds the host's time beyond this process to figures
// worked out by hand from the guest fixtures. Between guest-a and guest-b
// cpu0 gained 300 user, 0 nice and 100 system ticks, cpu1 100, 20 and
// 50: 570 ticks, 5.70 CPU seconds. Their irq (10), softirq (40 + 10) and
// steal (10) ticks are not counted; counted, they would make 6.40.
func TestHostOthersPct(t *testing.T) {
	a, err := ReadCPU(fixture("guest-a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCPU(fixture("guest-b"))
	if err != nil {
		t.Fatal(err)
	}
	u := CPUDelta(a, b)
	tests := []struct {
		name     string
		u        CPUUsage
		proc     ProcessCPU
		elapsedS float64
		want     float64
	}{
		// 5.70 - 2.50 - 1.25 = 1.95 CPU seconds over 5 s: 39% of a CPU.
		{"others beside the process", u, ProcessCPU{User: 2500 * time.Millisecond, System: 1250 * time.Millisecond}, 5, 39},
		// Nothing but this process: 5.70 - 5.70.
		{"the process alone", u, ProcessCPU{User: 5 * time.Second, System: 700 * time.Millisecond}, 5, 0},
		// Its rusage a little over the host's ticks: none, not less.
		{"the process over the ticks", u, ProcessCPU{User: 6 * time.Second}, 5, 0},
		{"no window", u, ProcessCPU{}, 0, 0},
		{"no ticks", CPUDelta(a, a), ProcessCPU{}, 5, 0},
	}
	for _, tt := range tests {
		if got := HostOthersPct(tt.u, tt.proc, tt.elapsedS); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v%% of a CPU, want %v", tt.name, got, tt.want)
		}
	}
	if got := CPUResult(u, ProcessCPU{User: 2500 * time.Millisecond, System: 1250 * time.Millisecond}, 5, 1).OtherProcessesHostUtilPct; math.Abs(got-39) > 1e-9 {
		t.Errorf("CPUResult's other_processes_host_util_pct %v, want 39", got)
	}
}

// TestOthersOnHost: the host's figure with the peer's process taken out
// when it ran on the host apart from this one, or the processes named
// when theirs is more or the host's cannot be trusted.
func TestOthersOnHost(t *testing.T) {
	named := []TaskCPU{{ID: 7, Name: "wirespeed", UtilPct: 50}, {ID: 9, Name: "make", UtilPct: 10}}
	tests := []struct {
		name string
		c    CPU
		peer *CPU
		want float64
	}{
		// 150 - 50 (the peer, pid 7): 100.
		{"peer on the host", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named, OtherProcessesHostUtilPct: 150}, &CPU{PID: 7}, 100},
		// The peer in this process is inside its own time already.
		{"peer in this process", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named, OtherProcessesHostUtilPct: 150}, &CPU{PID: 3}, 150},
		// The peer elsewhere (its pid not among the named).
		{"peer on another host", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named, OtherProcessesHostUtilPct: 150}, &CPU{PID: 11}, 150},
		{"no peer", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named, OtherProcessesHostUtilPct: 150}, nil, 150},
		// A record from before the host's figure: the named, peer out.
		{"no host figure", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named}, &CPU{PID: 7}, 10},
		// The named over the host's (ticks' noise): the named.
		{"named over the host's", CPU{PID: 3, OtherProcessesUtilPct: 60, OtherProcesses: named, OtherProcessesHostUtilPct: 55}, &CPU{PID: 7}, 10},
		// The scan failed: a peer on the host could not be told apart.
		{"scan failed", CPU{PID: 3, OtherProcessesHostUtilPct: 150, TasksError: "read tasks: permission denied"}, &CPU{PID: 7}, 0},
	}
	for _, tt := range tests {
		if got := tt.c.OthersOnHost(tt.peer); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v%% of a CPU, want %v", tt.name, got, tt.want)
		}
	}
}
