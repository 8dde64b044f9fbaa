package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/nstest"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// The limit lab tests: each sets up a case whose limit the test knows
// (a tbf rate it chose, a buffer it made tiny, a busy loop it started)
// and checks the diagnosis against it. Runs are 2 s and a case is tried
// up to five times (CI's machine, with 13% steal, once missed the veth
// receive-window case three times running; every attempt is logged).
// They run in .ci/run's serial step, alone on the machine. On a loaded
// host a sender kept waiting for its CPU falls short of the link, and
// the right answer is then other_processes: with WIRESPEED_RT_TESTS=1
// both sides run at a real-time priority, except in the busy-loop case
// (which is about being kept from the CPU) and the unknown one. It is
// off by default: two SCHED_FIFO processes keeping both CPUs of a 2-CPU
// host busy can starve the kernel threads that run the tbf and the
// softirqs, and a run then hung until it was killed at 60 s (seen three
// times in CI-like runs). Each case logs the text line (`limited by:
// ...`) it got.

// limitCmd is this binary as wirespeed. With rt it runs under SCHED_FIFO
// (chrt -f 10): other work on the host, whatever its session or nice
// level (autogroups make nice count only within a session), cannot take
// its CPU. The kernel keeps 5% of each second for everything else
// (sched_rt_runtime_us), the runs are 2 s, and only the 1K-message case
// keeps a CPU busy. The test is skipped when chrt cannot run it so.
func limitCmd(t *testing.T, rt bool, args ...string) *exec.Cmd {
	t.Helper()
	if !rt || os.Getenv("WIRESPEED_RT_TESTS") != "1" {
		return wirespeed(args...)
	}
	p, err := exec.LookPath("chrt")
	if err != nil {
		t.Skip("no chrt program to run the CPU case at a real-time priority")
	}
	if err := exec.Command(p, "-f", "10", "true").Run(); err != nil {
		t.Skipf("chrt -f 10 fails here (%v): the CPU case needs a real-time priority on a shared machine", err)
	}
	cmd := exec.Command(p, append([]string{"-f", "10", os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "WIRESPEED_MAIN=1")
	return cmd
}

// limitServer starts `wirespeed serve` on addr in side s of l and waits
// until a connection from side from gets through.
func limitServer(t *testing.T, l *lab.Lab, s, from lab.HostName, addr string, rt bool) {
	t.Helper()
	srv := limitCmd(t, rt, "serve", "--listen", addr, "--log-level", "warn")
	serveIn(t, "the server", srv, func(c *exec.Cmd) error { return l.Start(s, c) },
		func(f func() error) error { return l.Do(from, f) }, addr)
}

// limitRun runs `wirespeed run ... --json` in side s and returns the
// document and its text line.
func limitRun(t *testing.T, l *lab.Lab, s lab.HostName, rt bool, args ...string) (result.Document, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := limitCmd(t, rt, append([]string{"run"}, append(args, "--json")...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := l.Start(s, cmd); err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wirespeed run %v: %v\n%s", args, err, stderr.String())
	}
	var doc result.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("not a results document: %v\n%s", err, stdout.String())
	}
	if doc.Summary.Limit == nil {
		t.Fatalf("no summary.limit in the result:\n%s", stdout.String())
	}
	// The limit as -v words it: the line and its notes.
	line := "limited by: " + report.LimitText(doc.Summary.Limit) + "\n"
	for _, n := range report.WarningTexts(doc.Summary.Limit.Notes) {
		line += "  note: " + n + "\n"
	}
	return doc, line
}

// tryAttempts is how many times try runs a case.
const tryAttempts = 5

// try runs a case up to tryAttempts times until ok accepts its result;
// the last result is returned either way, with whether it was accepted.
func try(t *testing.T, name string, once func() (result.Document, string), ok func(result.Document) bool) (result.Document, bool) {
	t.Helper()
	var doc result.Document
	for attempt := 1; attempt <= tryAttempts; attempt++ {
		var line string
		doc, line = once()
		t.Logf("%s, attempt %d: %.2f Mbit/s\n%s", name, attempt, doc.Summary.BitsPerSecond/1e6, line)
		if ok(doc) {
			return doc, true
		}
	}
	if why := docStarved(doc); why != "" {
		testkit.SkipStarved(t, fmt.Sprintf("%s: limit %s in every attempt, and the last run shows %s", name, doc.Summary.Limit.Kind, why))
	}
	return doc, false
}

// docStarved is what a run's own figures say of a machine too busy for
// it: its limit diagnosis (other processes' CPU), either side's CPU
// figures (testkit.CPUStarved), or a window its sampler could not keep
// on time (side's warning); "" when they say nothing of the kind.
func docStarved(doc result.Document) string {
	if l := doc.Summary.Limit; l != nil && l.Kind == result.LimitOtherProcesses {
		return "the diagnosis " + string(l.Kind)
	}
	for _, c := range []*measure.CPU{doc.Summary.LocalCPU, doc.Summary.RemoteCPU} {
		if c == nil {
			continue
		}
		if s := testkit.CPUStarved(c.UtilPct, c.BusiestCPUPct, c.StealPct, c.OtherProcessesUtilPct); s != "" {
			return s
		}
	}
	for _, w := range report.WarningTexts(doc.Warnings) {
		if strings.Contains(w, "too busy to run it on time") {
			return w
		}
	}
	return ""
}

func TestLimitLab(t *testing.T) {
	testkit.Serial(t)
	if runtime.NumCPU() < 2 {
		t.Skip("the busy-loop case needs two CPUs")
	}
	const rate = 50e6
	shaped := nstest.NewLab(t, lab.Config{RateBitsPerSecond: rate})
	addr := netip.AddrPortFrom(shaped.A.IPv4, 7576).String()
	limitServer(t, shaped, lab.A, lab.B, addr, true)

	t.Run("tbf link", func(t *testing.T) {
		// The client in side b sends through its veth end's tbf.
		doc, ok := try(t, "tbf link", func() (result.Document, string) {
			return limitRun(t, shaped, lab.B, true, addr, "-l", "2", "--omit", "1", "-i", "0", "--cc", "cubic")
		}, func(d result.Document) bool { return d.Summary.Limit.Kind == result.LimitLink })
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s, want link; notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		if r := l.Evidence.Rate; r == nil || r.Source != "qdisc" || r.Qdisc != "tbf" || r.BitsPerSecond != rate || l.Side != result.Local {
			t.Errorf("link evidence %+v (side %s), want the local tbf at %g bit/s", r, l.Side, rate)
		}
	})

	t.Run("udp rate cap", func(t *testing.T) {
		// -b 10M, a fifth of the link: the cap, not the link.
		const cap = 10e6
		doc, ok := try(t, "udp rate cap", func() (result.Document, string) {
			return limitRun(t, shaped, lab.B, true, addr, "-t", "UDP_STREAM", "-b", "10M", "-l", "2", "-i", "0")
		}, func(d result.Document) bool { return d.Summary.Limit.Kind == result.LimitRateCap })
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s, want rate_cap; notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		if r := l.Evidence.Rate; r == nil || r.Source != "rate" || r.BitsPerSecond != cap {
			t.Errorf("rate evidence %+v, want the -b cap of %g", r, cap)
		}
	})

	t.Run("tcp rate cap", func(t *testing.T) {
		// TCP -b 10M paces the stream's payload as UDP's -b does: the
		// cap, not the link nor "unknown" (as `run -b 200M` once said).
		const cap = 10e6
		doc, ok := try(t, "tcp rate cap", func() (result.Document, string) {
			return limitRun(t, shaped, lab.B, true, addr, "-b", "10M", "-l", "2", "-i", "0")
		}, func(d result.Document) bool { return d.Summary.Limit.Kind == result.LimitRateCap })
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s, want rate_cap; notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		if r := l.Evidence.Rate; r == nil || r.Source != "rate" || r.BitsPerSecond != cap {
			t.Errorf("rate evidence %+v, want the -b cap of %g", r, cap)
		}
	})

	// The other cases run over side a's own loopback: both processes on
	// one host, as in a loopback test, isolated from the host's.
	lo := nstest.NewLab(t, lab.Config{})
	loAddr, rtAddr := "127.0.0.1:7577", "127.0.0.1:7578"
	limitServer(t, lo, lab.A, lab.A, loAddr, false)
	limitServer(t, lo, lab.A, lab.A, rtAddr, true)

	t.Run("receive window", func(t *testing.T) {
		// -S 4K: the server's receive buffer, and so the window it
		// offers, is a few KB.
		doc, ok := try(t, "receive window", func() (result.Document, string) {
			return limitRun(t, lo, lab.A, true, rtAddr, "-S", "4K", "-l", "2", "-i", "0", "--cpu")
		}, func(d result.Document) bool { return d.Summary.Limit.Kind == result.LimitReceiveWindow })
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s, want receive_window; notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		if e := l.Evidence.TCP; e == nil || e.RwndLimitedPct < 50 || e.RcvBufBytes > 64<<10 || l.Side != result.Remote {
			t.Errorf("tcp evidence %+v (side %s), want the remote side rwnd-limited with a small buffer", e, l.Side)
		}
	})

	t.Run("receive window over veth, ten times", func(t *testing.T) {
		// Issue 32's lab: -S 4K from side b to a server in side a over
		// the veth pair. The window the user set held the rate, and
		// one setup gets one answer: it is named in every run, as the
		// limit or beside a CPU. What the runs said differed with the
		// machine: rwnd_limited 71% with the receiver's thread at 83%
		// (receive_window), 45-48% with the receiver's CPU at 100%
		// (receiver_cpu, the window beside it), 6-23% with the sender's
		// thread at 89% and 8.5 KB in flight of an 8 KB buffer
		// (sender_cpu, the window beside it by what was in flight).
		vethAddr := netip.AddrPortFrom(lo.A.IPv4, 7579).String()
		limitServer(t, lo, lab.A, lab.B, vethAddr, true)
		const runs = 10
		var missed []string
		var last result.Document
		for i := 1; i <= runs; i++ {
			d, line := limitRun(t, lo, lab.B, true, vethAddr, "-S", "4K", "-l", "1", "-i", "0", "--cpu")
			last = d
			l := d.Summary.Limit
			tcp := result.LimitTCP{}
			if l.Evidence.TCP != nil {
				tcp = *l.Evidence.TCP
			}
			t.Logf("run %d: %.0f Mbit/s, limit %s (also %v) on side %s; rwnd_limited %.0f%%, in flight %.0f%% of %d bytes\n%s",
				i, d.Summary.BitsPerSecond/1e6, l.Kind, l.Also, l.Side, tcp.RwndLimitedPct, tcp.InFlightPct, tcp.RcvBufBytes, line)
			if l.Kind != result.LimitReceiveWindow && !slices.Contains(l.Also, result.LimitReceiveWindow) {
				missed = append(missed, fmt.Sprintf("run %d: %s (also %v)", i, l.Kind, l.Also))
				continue
			}
			if e := l.Evidence.TCP; e == nil || e.RcvBufBytes > 64<<10 || (l.Kind == result.LimitReceiveWindow && l.Side != result.Remote) {
				t.Errorf("run %d: tcp evidence %+v (side %s), want the remote side's small buffer", i, e, l.Side)
			}
			// The second limit is named in both the also list and
			// the notes, or in neither.
			notes := strings.Join(report.WarningTexts(l.Notes), "; ")
			if l.Kind != result.LimitReceiveWindow && !strings.Contains(notes, "receive window set by the buffer asked for") {
				t.Errorf("run %d: also %v but notes %q: the window is named in both or neither", i, l.Also, notes)
			}
			if l.Kind == result.LimitReceiveWindow && slices.Contains(l.Also, result.LimitReceiverCPU) != strings.Contains(notes, "also near saturation") {
				t.Errorf("run %d: also %v but notes %q: the CPU is named in both or neither", i, l.Also, notes)
			}
		}
		if len(missed) > 0 {
			if why := docStarved(last); why != "" {
				testkit.SkipStarved(t, fmt.Sprintf("the window unnamed in %d of %d runs (%s), and the last run shows %s", len(missed), runs, strings.Join(missed, "; "), why))
			}
			t.Fatalf("the window the user fixed unnamed in %d of %d runs: %s", len(missed), runs, strings.Join(missed, "; "))
		}
	})

	t.Run("cpu with 1K messages", func(t *testing.T) {
		cpuKinds := []result.LimitKind{result.LimitSenderCPU, result.LimitReceiverCPU}
		doc, ok := try(t, "1K messages", func() (result.Document, string) {
			return limitRun(t, lo, lab.A, true, rtAddr, "-m", "1K", "-l", "2", "-i", "0", "--cpu")
		}, func(d result.Document) bool { return slices.Contains(cpuKinds, d.Summary.Limit.Kind) })
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s, want a CPU kind; notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		// The evidence is the thread the side's own record names.
		c := doc.Summary.LocalCPU
		if l.Side == result.Remote {
			c = doc.Summary.RemoteCPU
		}
		if e := l.Evidence.CPU; e == nil || c == nil || len(c.Threads) == 0 || e.ThreadID != c.Threads[0].ID || e.ThreadPct < 50 {
			t.Errorf("cpu evidence %+v, want the busiest thread of the %s side", e, l.Side)
		}
	})

	t.Run("busy loop beside the test", func(t *testing.T) {
		// A shell loop pinned to CPU 1, and both sides' data-path
		// threads pinned there too (-T 1,1): the loop takes most of the
		// CPU they wait for. It runs at nice -20 in a session of its own
		// whose autogroup is at nice -20 too (with autogroups, nice only
		// counts within a session), and ends by itself after a minute
		// if the test cannot stop it ($SECONDS: no process per turn).
		const busy = "while [ $SECONDS -lt 60 ]; do :; done"
		if _, err := exec.LookPath("bash"); err != nil {
			t.Skip("no bash for the busy loop")
		}
		loop := exec.Command("nice", "-n", "-20", "bash", "-c", busy)
		if _, err := exec.LookPath("nice"); err != nil {
			loop = exec.Command("bash", "-c", busy)
		}
		loop.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := loop.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { loop.Process.Kill(); loop.Wait() })
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/autogroup", loop.Process.Pid), []byte("-20"), 0); err != nil {
			t.Logf("autogroup of the busy loop left as it is: %v", err)
		}
		var set unix.CPUSet
		set.Set(1)
		if err := unix.SchedSetaffinity(loop.Process.Pid, &set); err != nil {
			t.Fatalf("pin the busy loop: %v", err)
		}
		pid := loop.Process.Pid
		doc, ok := try(t, "busy loop", func() (result.Document, string) {
			return limitRun(t, lo, lab.A, false, loAddr, "-T", "1,1", "-l", "2", "-i", "0", "--cpu")
		}, func(d result.Document) bool {
			o := d.Summary.Limit.Evidence.Others
			return d.Summary.Limit.Kind == result.LimitOtherProcesses && o != nil && len(o.Busiest) > 0 && o.Busiest[0].ID == pid
		})
		l := doc.Summary.Limit
		if !ok {
			t.Fatalf("limit %s %+v, want other_processes naming the loop, pid %d, first; notes %q", l.Kind, l.Evidence.Others, pid, report.WarningTexts(l.Notes))
		}
	})

	t.Run("unknown", func(t *testing.T) {
		// Without --cpu nothing tells a CPU limit on loopback, where
		// there is no rate either: the answer is unknown, with why.
		doc, line := limitRun(t, lo, lab.A, false, loAddr, "-l", "2", "-i", "0", "--cpu=false")
		l := doc.Summary.Limit
		t.Logf("unknown: %.2f Mbit/s\n%s", doc.Summary.BitsPerSecond/1e6, line)
		if l.Kind != result.LimitUnknown {
			t.Fatalf("limit %s, want unknown (no CPU figures, no rate on loopback); notes %q", l.Kind, report.WarningTexts(l.Notes))
		}
		if len(report.WarningTexts(l.Notes)) == 0 {
			t.Error("unknown without a reason")
		}
	})
}
