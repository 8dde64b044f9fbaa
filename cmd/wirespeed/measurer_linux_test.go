package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// Independent measurers of a lab's round trip under load: Debian's irtt
// (isochronous UDP, its own client and server), run beside a load in the
// lab's namespaces, so that what wirespeed's probes or flent's pings say
// is checked against a measurer that shares none of their code.

// irttPort is where the tests' irtt server listens, inside a lab's side
// a: a namespace of the test's own, so the port cannot collide.
const irttPort = 2112

// needIrtt skips t without Debian's irtt.
func needIrtt(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("irtt"); err != nil {
		t.Skip("needs irtt (Debian package irtt)")
	}
}

// startIrttServer starts `irtt server` in side a of l and returns its
// address; it is killed when the test ends.
func startIrttServer(t *testing.T, l *lab.Lab) string {
	t.Helper()
	addr := net.JoinHostPort(l.A.IPv4.String(), strconv.Itoa(irttPort))
	srv := exec.Command("irtt", "server", "-b", addr)
	var log bytes.Buffer
	srv.Stdout, srv.Stderr = &log, &log
	if err := l.Start(lab.A, srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("irtt server: %s", log.String())
		}
	})
	time.Sleep(300 * time.Millisecond)
	return addr
}

// irttRoundTrip is one of irtt's round trips that came back: when the
// client sent it, how long it took as irtt gives it (its server's
// processing subtracted), and that processing (the server's receive to
// its send, by its timestamps).
type irttRoundTrip struct {
	Sent     time.Time
	RTTMs    float64
	ServerMs float64
}

// irttResult is what an irtt client run measured: its round trips, and
// the median of its server's processing time.
type irttResult struct {
	RoundTrips     []irttRoundTrip
	ServerMedianUs float64
}

// irttClient runs `irtt client` in side b against addr, one packet every
// interval for d, and returns what it measured.
func irttClient(t *testing.T, l *lab.Lab, addr string, interval, d time.Duration, extra ...string) irttResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "irtt.json")
	args := append([]string{"client", "-i", interval.String(), "-d", d.String(), "-Q", "-o", out}, extra...)
	cmd := exec.Command("irtt", append(args, addr)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := l.Start(lab.B, cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("irtt client: %v\n%s", err, log.String())
	}
	return readIrtt(t, out)
}

// readIrtt reads irtt's JSON output.
func readIrtt(t *testing.T, path string) irttResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type stamp struct {
		Wall int64 `json:"wall"`
	}
	var d struct {
		RoundTrips []struct {
			Lost       string `json:"lost"`
			Timestamps struct {
				Client struct {
					Send stamp `json:"send"`
				} `json:"client"`
				Server struct {
					Receive stamp `json:"receive"`
					Send    stamp `json:"send"`
				} `json:"server"`
			} `json:"timestamps"`
			Delay struct {
				RTT int64 `json:"rtt"`
			} `json:"delay"`
		} `json:"round_trips"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("irtt's output: %v", err)
	}
	var r irttResult
	var server []float64
	for _, rt := range d.RoundTrips {
		if rt.Lost != "false" {
			continue
		}
		ts := rt.Timestamps
		p := float64(ts.Server.Send.Wall-ts.Server.Receive.Wall) / 1e6
		r.RoundTrips = append(r.RoundTrips, irttRoundTrip{Sent: time.Unix(0, ts.Client.Send.Wall), RTTMs: float64(rt.Delay.RTT) / 1e6, ServerMs: p})
		server = append(server, p*1e3)
	}
	r.ServerMedianUs = median(server)
	return r
}

// window is the span of wall-clock time irtt's round trips were sent in.
func (r irttResult) window() (from, to time.Time) {
	if len(r.RoundTrips) == 0 {
		return
	}
	return r.RoundTrips[0].Sent, r.RoundTrips[len(r.RoundTrips)-1].Sent
}

// median of v, which it sorts; 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// rtts are the round trips of r.
func (r irttResult) rtts() []float64 {
	v := make([]float64, len(r.RoundTrips))
	for i, rt := range r.RoundTrips {
		v[i] = rt.RTTMs
	}
	return v
}

// probesIn are the round trips of wirespeed's UDP probes (of doc, an
// RRUL run's) that were sent between from and to by the wall clock: the
// probes' times count from the run's start, which the document holds.
func probesIn(doc result.Document, from, to time.Time) []float64 {
	u := doc.Summary.UnderLoad
	if u == nil {
		return nil
	}
	var v []float64
	for _, p := range u.Probes.UDP {
		at := doc.Started.Add(time.Duration(p.T * float64(time.Second)))
		if !p.Lost && !at.Before(from) && !at.After(to) {
			v = append(v, p.RTTMs)
		}
	}
	return v
}

// startRun starts `wirespeed run args... --json` in side b of l and
// returns a function that waits for it (killing it after limit: the test
// fails) and returns its document.
func startRun(t *testing.T, l *lab.Lab, limit time.Duration, args ...string) func() result.Document {
	t.Helper()
	cmd := wirespeed(append(append([]string{"run"}, args...), "--json")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := l.Start(lab.B, cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return func() result.Document {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("wirespeed run %v: %v\n%s", args, err, errOut.String())
			}
		case <-time.After(limit):
			cmd.Process.Kill()
			<-done
			t.Fatalf("wirespeed run %v hung: killed after %v\n%s", args, limit, errOut.String())
		}
		var doc result.Document
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("not a results document: %v\n%s", err, out.String())
		}
		return doc
	}
}

// agree says how a compares with b, and whether it is within x0.75-1.33
// of it (the bound for wirespeed against flent): "" when it is,
// or why not.
func agree(t *testing.T, what string, a, b float64) string {
	return agreeWithin(t, what, "ms", a, b, 0.75, 1.33)
}

// agreeWithin is agree with the bound lo-hi of a/b, both in unit.
func agreeWithin(t *testing.T, what, unit string, a, b, lo, hi float64) string {
	t.Helper()
	r := a / b
	t.Logf("%s: %.1f against %.1f %s, x%.2f", what, a, b, unit, r)
	if !(r >= lo && r <= hi) {
		return fmt.Sprintf("%s: %.1f %s is x%.2f of %.1f %s, not within x%.2f-%.2f", what, a, unit, r, b, unit, lo, hi)
	}
	return ""
}

// cubicDefault makes cubic the default congestion control of both of
// l's hosts, for the programs that set none on their sockets (netserver,
// whose sockets flent's tcp_cong_control does not reach). A namespace
// may only default to an allowed algorithm, and the allowed list is the
// host's: cubic joins it for the test and the list is restored after.
func cubicDefault(t *testing.T, l *lab.Lab) {
	t.Helper()
	const allowed = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
	was, err := os.ReadFile(allowed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(was)), "cubic") {
		if err := os.WriteFile(allowed, []byte(strings.TrimSpace(string(was))+" cubic"), 0o644); err != nil {
			t.Fatalf("allow cubic: %v", err)
		}
		t.Cleanup(func() {
			if err := os.WriteFile(allowed, was, 0o644); err != nil {
				t.Errorf("restore %s to %q: %v", allowed, was, err)
			}
		})
	}
	for _, s := range []lab.HostName{lab.A, lab.B} {
		cmd := exec.Command("sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic")
		if err := l.Start(s, cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("sysctl tcp_congestion_control=cubic in side %s: %v", s, err)
		}
	}
}

// rrulArgs are the RRUL runs the measurer tests make from side b: cubic,
// a 3 s idle phase, then a load of load seconds.
func rrulArgs(addr string, load int) []string {
	return []string{addr, "-t", "RRUL", "--cc", "cubic", "-l", strconv.Itoa(load), "--idle", "3", "--cpu=false"}
}

// twice runs attempt, and once more if what it compared disagreed (it
// returns why; "" when they agreed), and fails t if both disagreed. Two
// measurers of one path agree unless the machine starved one of them for
// part of the window (this shared machine has stalled a process for
// 6 s), which a second attempt seldom repeats; a real disagreement does,
// and fails.
func twice(t *testing.T, attempt func() string) {
	t.Helper()
	why := attempt()
	if why == "" {
		return
	}
	t.Logf("attempt 1: %s; trying once more", why)
	h0 := testkit.ReadHostCPU("/proc")
	if why = attempt(); why != "" {
		// A probe that waited for a CPU is late by that wait: on a host
		// kept busy by other work over the attempt (two `yes` made the
		// idle medians swing x0.68-x1.21 against irtt's), the round trips
		// say how long each measurer waited, not the path.
		if starved := h0.Starved(testkit.ReadHostCPU("/proc")); starved != "" {
			testkit.SkipStarved(t, "attempt 2 as well: "+why+"; over it "+starved)
			return
		}
		t.Errorf("attempt 2 as well: %s", why)
	}
}

// TestRRULAgainstIrtt: wirespeed's load measured by two measurers at
// once. On the lab (tbf 20mbit burst 16kb latency 100ms on each
// end's egress, cubic) Debian's irtt, a measurer that shares no code with
// wirespeed, sends one packet every 20 ms across the same two queues
// while an RRUL run loads them; over the same 10 s of the load, the
// median round trip of wirespeed's UDP probes is within 15% of irtt's
// (tighter than the x0.75-1.33 the issue asks of wirespeed against
// flent: here the two measure the same queues at the same moments).
func TestRRULAgainstIrtt(t *testing.T) {
	testkit.Serial(t)
	needIrtt(t)
	l, addr, queuesMs := rrulLab(t, "100ms")
	irttAddr := startIrttServer(t, l)
	twice(t, func() string {
		wait := startRun(t, l, 90*time.Second, rrulArgs(addr, 16)...)
		// The load starts after the 3 s idle phase and the control
		// handshake; irtt runs from 7 s to 17 s, inside the load once the
		// queues have filled.
		time.Sleep(7 * time.Second)
		ir := irttClient(t, l, irttAddr, 20*time.Millisecond, 10*time.Second)
		doc := wait()
		from, to := ir.window()
		u := doc.Summary.UnderLoad
		if u == nil {
			t.Fatal("no summary.under_load.probes in an RRUL result")
		}
		loadFrom := doc.Started.Add(time.Duration(u.Probes.LoadStartS * float64(time.Second)))
		loadTo := doc.Started.Add(time.Duration(u.Probes.LoadEndS * float64(time.Second)))
		// A starved machine can delay either program by seconds: then
		// the windows miss each other, which is a reason to try again.
		if from.Before(loadFrom) || to.After(loadTo) {
			return fmt.Sprintf("irtt ran %v-%v, outside the load's %v-%v", from.Format(time.StampMilli), to.Format(time.StampMilli), loadFrom.Format(time.StampMilli), loadTo.Format(time.StampMilli))
		}
		ws := probesIn(doc, from, to)
		if len(ws) < 250 || len(ir.RoundTrips) < 250 {
			return fmt.Sprintf("%d wirespeed probes and %d irtt round trips in 10 s: not one every 20 ms", len(ws), len(ir.RoundTrips))
		}
		t.Logf("the two queues allow %.1f ms; wirespeed's loaded p50 over the whole load %.1f ms", queuesMs, u.Loaded.UDP.P50Ms)
		// The same packets' path at the same moments: closer than the
		// issue's x0.75-1.33, within 15% (they were within 1% here).
		return agreeWithin(t, "wirespeed's UDP probes' median round trip against irtt's, over the same 10 s of wirespeed's load", "ms", median(ws), median(ir.rtts()), 0.85, 1.15)
	})
}

// TestRRULIdleAgainstIrtt: on loopback, the idle phase's UDP probes
// against Debian's irtt sending the same way at the same time (one
// packet every 20 ms, 32 bytes asked): over irtt's 10 s, the median of
// wirespeed's probes is within 20% of irtt's median round trip.
//
// irtt is the like measurer: a Go program whose packets, 20 ms apart,
// each wake a sleeping server and then a sleeping client, as the probes
// do. UDP_RR is not (the issue asked for it too): its transactions follow
// one another, so neither thread ever sleeps, and on this host its median
// was 4-13 us where any exchange 20 ms apart paid about 100 us, two
// wake-ups (a capture on lo split wirespeed's 104 us into 54 us of
// server turnaround between request and echo and 50 us on the client).
// irtt's figure subtracts its server's processing time (receive to send,
// 8-12 us by its timestamps), which wirespeed's echo has no timestamps to
// do; its server turns a packet around about 20 us slower than
// wirespeed's echo on the wire, which its subtraction leaves about 10 us
// of. The two run at once because on a shared machine the wake-ups
// change by 2x from one minute to the next.
func TestRRULIdleAgainstIrtt(t *testing.T) {
	testkit.Serial(t)
	needIrtt(t)
	addr, _ := startServer(t)
	irttAddr := testkit.FreeAddr(t)
	srv := exec.Command("irtt", "server", "-b", irttAddr)
	var slog strings.Builder
	srv.Stdout, srv.Stderr = &slog, &slog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	time.Sleep(300 * time.Millisecond)
	twice(t, func() string {
		run := wirespeed("run", addr, "-t", "RRUL", "--idle", "13", "-l", "1", "--cpu=false", "-i", "0", "--json")
		var out, errOut bytes.Buffer
		run.Stdout, run.Stderr = &out, &errOut
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		// The probes start once the run is set up, well within 1.5 s.
		time.Sleep(1500 * time.Millisecond)
		path := filepath.Join(t.TempDir(), "irtt.json")
		ic := exec.Command("irtt", "client", "-i", "20ms", "-d", "10s", "-l", "32", "-Q", "-o", path, irttAddr)
		if b, err := ic.CombinedOutput(); err != nil {
			run.Process.Kill()
			run.Wait()
			t.Fatalf("irtt client: %v\n%s\nirtt server: %s", err, b, slog.String())
		}
		if err := run.Wait(); err != nil {
			t.Fatalf("wirespeed run: %v\n%s", err, errOut.String())
		}
		var doc result.Document
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("not a results document: %v\n%s", err, out.String())
		}
		ir := readIrtt(t, path)
		from, to := ir.window()
		u := doc.Summary.UnderLoad
		if u == nil {
			t.Fatal("no summary.under_load in an RRUL result")
		}
		if loadAt := doc.Started.Add(time.Duration(u.Probes.LoadStartS * float64(time.Second))); to.After(loadAt) {
			return fmt.Sprintf("irtt ran until %v, after the load began at %v", to.Format(time.StampMicro), loadAt.Format(time.StampMicro))
		}
		ws := probesIn(doc, from, to)
		if len(ws) < 400 || len(ir.RoundTrips) < 400 {
			return fmt.Sprintf("%d wirespeed probes and %d irtt round trips in 10 s: not one every 20 ms", len(ws), len(ir.RoundTrips))
		}
		var raw []float64
		for _, rt := range ir.RoundTrips {
			raw = append(raw, rt.RTTMs+rt.ServerMs)
		}
		t.Logf("irtt: median round trip %.1f us; %.1f us with its server's processing (median %.1f us) left in; wirespeed's idle UDP p50 over the whole idle phase %.1f us",
			median(ir.rtts())*1e3, median(raw)*1e3, ir.ServerMedianUs, u.Idle.UDP.P50Ms*1e3)
		return agreeWithin(t, "wirespeed's idle UDP probes' median against irtt's at 20 ms, over the same 10 s on loopback", "us", median(ws)*1e3, median(ir.rtts())*1e3, 0.8, 1.2)
	})
}
