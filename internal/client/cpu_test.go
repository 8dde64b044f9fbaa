package client_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestCPUOnLoopback: with --cpu both sides report their CPU over their
// window, and each side's service demand is netperf's formula applied to
// the figures the result reports: its utilization, its CPUs and its CPU
// window, per KB the receiver counted.
func TestCPUOnLoopback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU figures need /proc/stat")
	}
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPBidir} {
		t.Run(string(kind), func(t *testing.T) {
			sp := shortSpec(kind, 1)
			sp.Duration = 300 * time.Millisecond
			sp.CPU = true
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			for name, cpu := range map[string]*measure.CPU{"local": res.Summary.LocalCPU, "remote": res.Summary.RemoteCPU} {
				if cpu == nil {
					t.Fatalf("%s CPU missing; warnings %q", name, report.WarningTexts(res.Warnings))
				}
				if cpu.UtilPct <= 0 || cpu.CPUs < 1 || cpu.ElapsedS <= 0 {
					t.Errorf("%s CPU %+v: want utilization, CPUs and a window", name, cpu)
				}
				if cpu.ServiceDemandMicrosPerKB <= 0 {
					t.Errorf("%s service demand %v, want > 0", name, cpu.ServiceDemandMicrosPerKB)
				}
				want := cpu.UtilPct / 100 * float64(cpu.CPUs) * cpu.ElapsedS * 1e6 / (float64(res.Summary.Bytes) / 1024)
				if math.Abs(cpu.ServiceDemandMicrosPerKB-want) > 1e-9*want {
					t.Errorf("%s service demand %v, want %v from the reported figures", name, cpu.ServiceDemandMicrosPerKB, want)
				}
				// The window the CPU covers is the side's measurement window
				// (both windows' span for TCP_BIDIR), within scheduling noise.
				if cpu.ElapsedS < 0.9*sp.Duration.Seconds() || cpu.ElapsedS > sp.Duration.Seconds()+1 {
					t.Errorf("%s CPU window %.3fs for a %v run", name, cpu.ElapsedS, sp.Duration)
				}
			}
			for _, d := range res.Directions {
				if d.Summary.LocalCPU != nil || d.Summary.RemoteCPU != nil {
					t.Errorf("%s: CPU figures in a direction's summary; they belong to the run's", d.Direction)
				}
			}
		})
	}
	// Without --cpu nothing is sampled and nothing is reported.
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 200 * time.Millisecond
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if w := starvedWindow(report.WarningTexts(res.Warnings)); w != "" {
		testkit.SkipStarved(t, w)
		return
	}
	if res.Summary.LocalCPU != nil || res.Summary.RemoteCPU != nil || len(report.WarningTexts(res.Warnings)) > 0 {
		t.Errorf("CPU not asked: local %v remote %v warnings %q", res.Summary.LocalCPU, res.Summary.RemoteCPU, report.WarningTexts(res.Warnings))
	}
}

// TestCPUProcRoot: the proc root comes from the configuration; a wrong one
// leaves the CPU figures out with a warning that names the file, and the
// run itself goes on.
func TestCPUProcRoot(t *testing.T) {
	addr, _ := startServer(t, server.Config{ProcRoot: "/nonexistent/server-proc"})
	c := dial(t, client.Config{Addr: addr, ProcRoot: "/nonexistent/client-proc"})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 200 * time.Millisecond
	sp.CPU = true
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.LocalCPU != nil || res.Summary.RemoteCPU != nil {
		t.Errorf("CPU figures from a proc root that does not exist")
	}
	if res.Summary.Bytes <= 0 {
		t.Errorf("the run did not go on without CPU figures")
	}
	found := map[string]bool{}
	for _, w := range report.WarningTexts(res.Warnings) {
		for _, root := range []string{"/nonexistent/client-proc", "/nonexistent/server-proc"} {
			if strings.Contains(w, root) {
				found[root] = true
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("warnings %q: want one naming each side's proc root", report.WarningTexts(res.Warnings))
	}
}
