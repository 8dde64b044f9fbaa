package endpoint

import (
	"context"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestReceiverWithNoDataReportsScheduleWindow: a UDP receiver whose
// sender's datagrams never arrive still reports its host's counters and
// CPU over the window the schedule gave it (Omit after its start, for
// Duration), so a reader can place the loss. The kernel counters are a
// namespace's of their own; the test sends datagrams to a closed port there
// before, during and after that window, and the receiver's Udp NoPorts
// must count exactly those sent during it.
func TestReceiverWithNoDataReportsScheduleWindow(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	a := l.Host(lab.A)
	// A process in a's namespace lends its /proc/PID/net; /proc/stat is
	// the host's.
	sleep := exec.Command("sleep", "30")
	if err := l.Start(lab.A, sleep); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	root := t.TempDir()
	for name, target := range map[string]string{
		"net":  filepath.Join("/proc", strconv.Itoa(sleep.Process.Pid), "net"),
		"stat": "/proc/stat",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	var probe *net.UDPConn
	if err := l.Do(lab.A, func() (err error) {
		probe, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a.IPv4, 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	closed := net.UDPAddrFromAddrPort(netip.AddrPortFrom(a.IPv4, 9)) // discard: nothing listens
	send := func(n int) {
		for range n {
			if _, err := probe.WriteToUDP([]byte("x"), closed); err != nil {
				t.Error(err)
			}
		}
	}

	// The receiver's socket is connected to a sender that never sends.
	rcv, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	sp := spec.Default()
	sp.Kind, sp.SendSize, sp.CPU = spec.UDPStream, 1200, true
	sp.Omit, sp.Duration, sp.Interval = 300*time.Millisecond, 400*time.Millisecond, 0
	cfg := Config{Spec: sp, Side: result.Remote, Sends: spec.ServerToClient, ProcRoot: root,
		FirstByteGrace: 400 * time.Millisecond, DrainTimeout: 100 * time.Millisecond,
		Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: rcv}}}
	done := make(chan result.SideResult, 1)
	start := time.Now()
	go func() {
		r, _ := Run(context.Background(), cfg)
		done <- r
	}()
	// Before the window (0-300 ms), in it (300-700 ms), after it.
	time.Sleep(100 * time.Millisecond)
	send(3)
	time.Sleep(time.Until(start.Add(500 * time.Millisecond)))
	send(7)
	time.Sleep(time.Until(start.Add(900 * time.Millisecond)))
	send(5)
	res := <-done

	if len(res.Flows) != 1 {
		t.Fatalf("%d flows", len(res.Flows))
	}
	f := res.Flows[0]
	if f.Bytes != 0 || !f.Truncated {
		t.Errorf("flow: %d bytes, truncated %v; want 0 and true", f.Bytes, f.Truncated)
	}
	if math.Abs(f.ElapsedS-sp.Duration.Seconds()) > 0.05 || math.Abs(f.StartOffsetS-sp.Omit.Seconds()) > 0.05 {
		t.Errorf("window %.3fs from %.3fs after the start, want the schedule's %v from %v", f.ElapsedS, f.StartOffsetS, sp.Duration, sp.Omit)
	}
	if res.Counters == nil {
		t.Fatalf("no kernel counters; warnings %v", res.Warnings)
	}
	if got := res.Counters.All["Udp.NoPorts"]; got != 7 {
		t.Errorf("Udp NoPorts %d over the window, want the 7 sent in it (3 before and 5 after it are not)", got)
	}
	if res.CPU == nil {
		t.Fatalf("no CPU figures: %s", res.CPUError)
	}
	if math.Abs(res.CPU.ElapsedS-sp.Duration.Seconds()) > 0.05 {
		t.Errorf("CPU window %.3fs, want %v", res.CPU.ElapsedS, sp.Duration)
	}
	c := res.CPU
	if c.TasksError == "" {
		t.Errorf("threads of an empty window: %+v, want none and the reason", c.Threads)
	}
	sum := c.UserPct + c.NicePct + c.SystemPct + c.IRQPct + c.SoftIRQPct + c.IOWaitPct + c.StealPct + c.IdlePct
	if c.CPUs < 1 || len(c.PerCPUUtilPct) != c.CPUs || math.Abs(sum-100) > 0.5 || c.PID != os.Getpid() {
		t.Errorf("CPU figures of %d CPUs (%d per-CPU), shares adding to %.2f%%, pid %d: want a window's figures of this process", c.CPUs, len(c.PerCPUUtilPct), sum, c.PID)
	}
}
