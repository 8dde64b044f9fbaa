package report

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// TestCPUWarnsOfOtherProcesses: the CPU lines are followed by a warning
// for the side whose window other processes shared, and only that side.
func TestCPUWarnsOfOtherProcesses(t *testing.T) {
	var b strings.Builder
	CPU(&b, result.Summary{
		LocalCPU:  &measure.CPU{CPUs: 2, UtilPct: 80, UserPct: 40, SystemPct: 40, IdlePct: 20, OtherProcessesUtilPct: 50},
		RemoteCPU: &measure.CPU{CPUs: 2, UtilPct: 80, UserPct: 40, SystemPct: 40, IdlePct: 20},
	})
	out := b.String()
	if !strings.Contains(out, "warning: local side: other processes used 50% of a CPU") || strings.Contains(out, "remote side: other") {
		t.Errorf("want a warning for the local side only:\n%s", out)
	}
}

// TestCPUShowsBaseline: a side's idle baseline is on its CPU line, and a
// large one (8% against 50% measured) warns for that side alone.
func TestCPUShowsBaseline(t *testing.T) {
	var b strings.Builder
	CPU(&b, result.Summary{
		LocalCPU:  &measure.CPU{CPUs: 2, UtilPct: 50, UserPct: 25, SystemPct: 25, IdlePct: 50, BusiestCPU: -1, Baseline: &measure.CPUBaseline{UtilPct: 4, WindowS: 0.2}},
		RemoteCPU: &measure.CPU{CPUs: 2, UtilPct: 50, UserPct: 25, SystemPct: 25, IdlePct: 50, BusiestCPU: -1, Baseline: &measure.CPUBaseline{UtilPct: 0.5, WindowS: 0.2}},
	})
	out := b.String()
	for _, want := range []string{"(2 cpus, busy before the test 4.0%;", "(2 cpus, busy before the test 0.5%;", "warning: local side: with no test running the host was 4.0% busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "remote side:") {
		t.Errorf("a 0.5%% baseline warned:\n%s", out)
	}
}

// TestOthersWarning holds the warning about other processes to shares
// worked out by hand: 60% of a CPU on 2 CPUs is 30% of the machine, 40%
// of a measured 75%.
func TestOthersWarning(t *testing.T) {
	tests := []struct {
		name string
		c    measure.CPU
		want string
	}{
		{"a busy neighbour", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 60,
			OtherProcesses: []measure.TaskCPU{{ID: 42, Name: "bash", UtilPct: 55}}},
			"local side: other processes used 60% of a CPU during the window (30.0% of the 2 CPUs, 40% of the 75.0% measured): the CPU utilization and service demand include them (busiest: bash, pid 42, 55% of a CPU)"},
		{"under 5% of what was measured", measure.CPU{CPUs: 2, UtilPct: 90, OtherProcessesUtilPct: 8}, ""},
		{"5% of a tiny utilization", measure.CPU{CPUs: 8, UtilPct: 2, OtherProcessesUtilPct: 4}, ""},
		{"no process figures", measure.CPU{CPUs: 2, UtilPct: 50}, ""},
		// On one host the peer's process (pid 7) is the test's: 50% of
		// a CPU of the 60 is taken out, 10% of a CPU is 5% of 2 CPUs, 6.7%
		// of a measured 75%.
		{"the peer's process is not another process", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 60,
			OtherProcesses: []measure.TaskCPU{{ID: 7, Name: "wirespeed", UtilPct: 50}, {ID: 9, Name: "cron", UtilPct: 10}}},
			"local side: other processes used 10% of a CPU during the window (5.0% of the 2 CPUs, 7% of the 75.0% measured): the CPU utilization and service demand include them (busiest: cron, pid 9, 10% of a CPU)"},
		// The host did 60% of a CPU beyond the test, the processes named
		// 20 of it: 30% of the machine, 40% of a measured 75%, the other
		// 40 in processes that came and went.
		{"processes that came and went", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 20, OtherProcessesHostUtilPct: 60,
			OtherProcesses: []measure.TaskCPU{{ID: 42, Name: "bash", UtilPct: 15}, {ID: 43, Name: "go", UtilPct: 5}}},
			"local side: other processes used 60% of a CPU during the window (30.0% of the 2 CPUs, 40% of the 75.0% measured): the CPU utilization and service demand include them; 20% of a CPU in processes alive the whole window, the rest in processes that started or ended within it (busiest: bash, pid 42, 15% of a CPU)"},
		// 9 more than the 20 named is within the ticks' noise: not said.
		{"a host's figure a little over the named", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 20, OtherProcessesHostUtilPct: 29,
			OtherProcesses: []measure.TaskCPU{{ID: 42, Name: "bash", UtilPct: 15}, {ID: 43, Name: "go", UtilPct: 5}}},
			"local side: other processes used 29% of a CPU during the window (14.5% of the 2 CPUs, 19% of the 75.0% measured): the CPU utilization and service demand include them (busiest: bash, pid 42, 15% of a CPU)"},
		// 60% of a CPU on 2 CPUs is 30% of the machine, 40% of a measured 75%.
		{"a busy neighbour and its baseline", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 60,
			Baseline: &measure.CPUBaseline{UtilPct: 31.5, WindowS: 0.2}},
			"local side: other processes used 60% of a CPU during the window (30.0% of the 2 CPUs, 40% of the 75.0% measured): the CPU utilization and service demand include them; with no test running the host was 31.5% busy (over 0.20s before the first run)"},
		// A baseline of 4% against 50% measured is 8%: over 5%, and 4% is over 1% of the CPUs.
		{"a busy baseline alone", measure.CPU{CPUs: 2, UtilPct: 50, Baseline: &measure.CPUBaseline{UtilPct: 4, WindowS: 0.2}},
			"local side: with no test running the host was 4.0% busy (measured over 0.20s before the first run, 8% of the 50.0% measured): the CPU utilization and service demand may include that load"},
		// 2% of 50% is 4%: under 5%.
		{"a quiet baseline", measure.CPU{CPUs: 2, UtilPct: 50, Baseline: &measure.CPUBaseline{UtilPct: 2, WindowS: 0.2}}, ""},
		// 0.5% of 5% is 10%, but 0.5% of the CPUs is under 1%.
		{"a tiny baseline", measure.CPU{CPUs: 2, UtilPct: 5, Baseline: &measure.CPUBaseline{UtilPct: 0.5, WindowS: 0.2}}, ""},
	}
	peer := &measure.CPU{PID: 7}
	for _, tt := range tests {
		got := ""
		if o := result.OthersFigures(result.Local, &tt.c, peer); o != nil {
			got = othersText(*o)
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestOthersWarningShort: the short warning says the others' total, the
// host's busy share and the processes named, and that the rest was in
// processes that came and went, when it was (issue 48: a host 98.5%
// busy was said to carry "other processes' 25% of a CPU (compile 18%)").
// On 2 CPUs 172% of a CPU is 86% of the host and 88% of the 98%
// measured: it warns.
func TestOthersWarningShort(t *testing.T) {
	named := []measure.TaskCPU{{ID: 41, Name: "compile", UtilPct: 18}, {ID: 42, Name: "vet", UtilPct: 4}, {ID: 43, Name: "sh", UtilPct: 2}, {ID: 44, Name: "go", UtilPct: 1}}
	tests := []struct {
		name string
		c    measure.CPU
		want string
	}{
		// 172 - 25 = 147% of a CPU short-lived: 1.5 CPUs' worth.
		{"processes that came and went", measure.CPU{CPUs: 2, UtilPct: 98, OtherProcessesUtilPct: 25, OtherProcesses: named, OtherProcessesHostUtilPct: 172},
			"local side: other processes took 1.7 CPUs, host 98% busy (1.5 short-lived, compile 18%, vet 4%, sh 2%)"},
		// Under a CPU: 80 - 25 = 55% short-lived.
		{"under a CPU", measure.CPU{CPUs: 2, UtilPct: 98, OtherProcessesUtilPct: 25, OtherProcesses: named, OtherProcessesHostUtilPct: 80},
			"local side: other processes took 80% of a CPU, host 98% busy (55% short-lived, compile 18%, vet 4%, sh 2%)"},
		// 5% of a CPU more than the named: the old line, with the host's total.
		{"the host's figure a little over", measure.CPU{CPUs: 2, UtilPct: 98, OtherProcessesUtilPct: 25, OtherProcesses: named, OtherProcessesHostUtilPct: 30},
			"local side: CPU figures include other processes' 30% of a CPU (compile 18%)"},
		{"no host's figure", measure.CPU{CPUs: 2, UtilPct: 98, OtherProcessesUtilPct: 25, OtherProcesses: named},
			"local side: CPU figures include other processes' 25% of a CPU (compile 18%)"},
		// None named: all of it came and went.
		{"none named", measure.CPU{CPUs: 2, UtilPct: 60, OtherProcessesHostUtilPct: 50},
			"local side: other processes took 50% of a CPU, host 60% busy (50% short-lived)"},
	}
	notLimited := func(result.Side) bool { return false }
	for _, tt := range tests {
		got := othersWarnings(result.Summary{LocalCPU: &tt.c}, false, false, notLimited)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
