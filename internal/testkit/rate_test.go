package testkit

import (
	"strings"
	"testing"
)

// TestRetryRate: a shortfall is retried only with the sender's CPU
// evidence, an overshoot never, and every attempt is counted as run.
func TestRetryRate(t *testing.T) {
	pause := RetryPause
	RetryPause = 0
	t.Cleanup(func() { RetryPause = pause })
	tests := []struct {
		name     string
		attempts []RateAttempt
		wantRuns int
		wantFail string
		wantSkip bool // unless strict
	}{
		{"first within", []RateAttempt{{Got: 99, Want: 100, Tol: 0.02}}, 1, "", false},
		{"starved then within", []RateAttempt{{Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 101, Want: 100, Tol: 0.02}}, 2, "", false},
		{"overshoot is not retried", []RateAttempt{{Got: 103, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 100, Want: 100, Tol: 0.02}}, 1, "overshot", false},
		{"short without evidence is retried", []RateAttempt{{Got: 90, Want: 100, Tol: 0.02}, {Got: 100, Want: 100, Tol: 0.02}}, 2, "", false},
		{"short every time without evidence", []RateAttempt{{Got: 90, Want: 100, Tol: 0.02}, {Got: 90, Want: 100, Tol: 0.02}, {Got: 90, Want: 100, Tol: 0.02}}, 3, "3 attempts fell short", false},
		{"starved every time", []RateAttempt{{Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}}, 3, "3 attempts fell short", true},
		{"starved at first, short without evidence at last", []RateAttempt{{Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 80, Want: 100, Tol: 0.02, Starved: "busy"}, {Got: 80, Want: 100, Tol: 0.02}}, 3, "3 attempts fell short", false},
	}
	for _, strict := range []bool{false, true} {
		mode := ""
		if strict {
			mode = "strict"
		}
		t.Setenv(SerialEnv, mode)
		for _, tt := range tests {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				runs := 0
				r := (&recorder{TB: t}).run(func(tb testing.TB) {
					RetryRate(tb, 3, func(i int) RateAttempt {
						runs++
						return tt.attempts[i-1]
					})
				})
				if runs != tt.wantRuns {
					t.Errorf("%d attempts run, want %d", runs, tt.wantRuns)
				}
				wantFail, skip := tt.wantFail, tt.wantSkip && !strict
				if skip {
					wantFail = ""
					if !strings.Contains(r.skipped, "starved") || !strings.Contains(r.skipped, "busy") {
						t.Errorf("skipped with %q, want the reason and its evidence", r.skipped)
					}
				} else if r.skipped != "" {
					t.Errorf("skipped (%q), want a failure", r.skipped)
				}
				if got := r.failures(); (wantFail == "") != (got == "") || !strings.Contains(got, wantFail) {
					t.Errorf("failures %q, want one saying %q", got, wantFail)
				}
			})
		}
	}
}

// TestCPUStarved: each figure alone, at its threshold and just below.
func TestCPUStarved(t *testing.T) {
	tests := []struct {
		util, busiest, steal, other float64
		want                        string
	}{
		{40, 60, 0.2, 10, ""},
		{89.9, 97.9, 4.9, 49.9, ""},
		{90, 60, 0, 0, "host's CPUs were 90% busy"},
		{40, 98, 0, 0, "busiest CPU was 98% busy"},
		{40, 60, 5, 0, "hypervisor took 5% of the host's CPU time (steal)"},
		{40, 60, 0, 50, "other processes took 50% of a CPU"},
	}
	for _, tt := range tests {
		got := CPUStarved(tt.util, tt.busiest, tt.steal, tt.other)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("CPUStarved(%g, %g, %g, %g) = %q, want %q", tt.util, tt.busiest, tt.steal, tt.other, got, tt.want)
		}
	}
}

func TestSerial(t *testing.T) {
	t.Setenv(SerialEnv, "skip")
	ran := false
	t.Run("skipped", func(t *testing.T) {
		Serial(t)
		ran = true
	})
	if ran {
		t.Error("a serial test ran with " + SerialEnv + "=skip")
	}
	t.Setenv(SerialEnv, "")
	t.Run("runs", func(t *testing.T) {
		Serial(t)
		ran = true
	})
	if !ran {
		t.Error("a serial test did not run without " + SerialEnv)
	}
}

// TestHostCPUStarved: a window of 95 busy ticks in 100 is starved; 40 in
// 100 is not; steal counts as busy and on its own; a window not read
// says nothing.
func TestHostCPUStarved(t *testing.T) {
	at := func(busy, idle, steal uint64) HostCPU { return HostCPU{busy: busy, idle: idle, steal: steal, ok: true} }
	for _, tc := range []struct {
		a, b HostCPU
		want string
	}{
		{at(100, 100, 0), at(195, 105, 0), "host's CPUs were 95% busy"},
		{at(100, 100, 0), at(140, 160, 0), ""},
		{at(100, 100, 0), at(130, 160, 10), "hypervisor took 10%"},
		{HostCPU{}, at(195, 105, 0), ""},
	} {
		if got := tc.a.Starved(tc.b); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v to %+v: %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	if h := ReadHostCPU(); !h.ok {
		t.Skip("no /proc/stat")
	}
}
