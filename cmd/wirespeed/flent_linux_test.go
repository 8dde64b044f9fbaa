package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/testkit"
)

// netperfDemoDir finds a netserver and netperf built with --enable-demo,
// which flent needs: on PATH, or in WIRESPEED_NETPERF_DIR (or
// /opt/netperf-demo/bin, where the CI notes build it). It returns the
// directory, or "" and why not.
func netperfDemoDir() (string, string) {
	var dirs []string
	if d := os.Getenv("WIRESPEED_NETPERF_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if p, err := exec.LookPath("netserver"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	dirs = append(dirs, "/opt/netperf-demo/bin")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "netserver")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "netperf")); err != nil {
			continue
		}
		return d, ""
	}
	return "", "no netperf and netserver built with --enable-demo (netperf is not a Debian package: build github.com/HewlettPackard/netperf with ./configure --enable-demo and put it on PATH or in WIRESPEED_NETPERF_DIR)"
}

// demoMode reports whether netperf in dir runs in demo mode (-D) against
// the netserver at host: flent's rrul_be needs its interim results.
// It tries a few times: the netserver may not listen yet.
func demoMode(t *testing.T, l *lab.Lab, dir, host string) bool {
	var out strings.Builder
	for range 10 {
		out.Reset()
		cmd := exec.Command(filepath.Join(dir, "netperf"), "-H", host, "-l", "1", "-D", "-0.2", "-t", "TCP_STREAM")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := l.Start(lab.B, cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if strings.Contains(out.String(), "Interim result") {
			return true
		}
		if err == nil {
			break // it ran, without interim results
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("netperf -D: %s", out.String())
	return false
}

// TestRRULAgainstFlent: wirespeed against flent's rrul_be (Debian's
// flent, driving netperf built with --enable-demo).
//
// On the lab, the queues on each end's own egress, the two loads
// differ, not the measurers: flent's ping median is x0.4-0.6 of
// wirespeed's loaded p50 there (docs/cookbook.md). A host's own qdisc is
// governed by TCP small queues: each socket may hold about two of its
// packets in it, and a packet's size is set by TSO autosizing, which
// since Linux 5.18 adds up to 64 KB for a flow whose smallest round trip
// is under a millisecond (net.ipv4.tcp_tso_rtt_log). wirespeed opens all
// its flows before the load, on the idle path (a few microseconds on
// veth), so each may hold ~128 KB in the queue; netperf opens each flow's
// connection as its process starts, most of them after the first flows
// filled a queue, so their smallest round trip is milliseconds, their
// packets two segments, and they hold ~7.5 KB each (ss: "t7456"). The
// "on each end" subtest shows that flent's pings measure its own load
// correctly (irtt beside them agrees), and logs what each load kept in
// the queues.
//
// Where the queue is a router's, no host's small-queue limit applies and
// both loads fill it: the "router" subtest holds the check there,
// wirespeed's loaded p50 within x0.75-1.33 of flent's ping median.
//
// netperf is not a Debian package: the test skips, saying so, where no
// netperf with demo mode is found (WIRESPEED_NETPERF_DIR, PATH or
// /opt/netperf-demo/bin).
func TestRRULAgainstFlent(t *testing.T) {
	testkit.Serial(t)
	if _, err := exec.LookPath("flent"); err != nil {
		t.Skip("needs flent (Debian package flent)")
	}
	needIrtt(t)
	dir, why := netperfDemoDir()
	if dir == "" {
		t.Skip(why)
	}
	t.Run("on each end", func(t *testing.T) {
		l, addr, _ := rrulLab(t, "100ms")
		cubicDefault(t, l)
		irttAddr := startIrttServer(t, l)
		startNetserver(t, l, dir)
		twice(t, func() string {
			fl := startFlent(t, l, dir)
			// flent's flows run from 5 s to 25 s; irtt from 10 s to 20 s.
			time.Sleep(10 * time.Second)
			var queues [2]float64
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for range 8 {
					for i, s := range []lab.HostName{lab.A, lab.B} {
						queues[i] += float64(egressBacklog(t, l, s)) / 8
					}
					time.Sleep(time.Second)
				}
			}()
			ir := irttClient(t, l, irttAddr, 20*time.Millisecond, 10*time.Second)
			<-sampled
			ping, pingIn, crashed := fl.wait(t, ir)
			if crashed != "" {
				return crashed
			}
			t.Logf("flent's load kept %.0f bytes in the server side's queue and %.0f in the client side's; its ping median over the loaded part %.1f ms", queues[0], queues[1], ping)
			why := agree(t, "flent's ICMP ping median against irtt's, over the same 10 s of flent's load", pingIn, median(ir.rtts()))
			if m := median(ir.rtts()); m < 10 {
				// A starved flent (a CI attempt at load average 40)
				// starts its flows late: irtt then measured an idle path.
				return fmt.Sprintf("flent's load was not on during irtt's 10 s (irtt's median %.2f ms, the queues' %.0f and %.0f bytes): flent started its flows late", m, queues[0], queues[1])
			}
			doc := labRun(t, l, rrulArgs(addr, 16)...)
			if q := doc.Summary.UnderLoad.Queue; q != nil {
				for _, s := range q.Sides {
					t.Logf("wirespeed's load kept %.0f bytes in the %s side's queue", s.BacklogBytes, s.Side)
				}
			}
			t.Logf("on each end's queue (not a check: the loads differ, see above): wirespeed's loaded p50 %.1f ms, flent's ping median %.1f ms, x%.2f",
				doc.Summary.UnderLoad.Loaded.All.P50Ms, ping, doc.Summary.UnderLoad.Loaded.All.P50Ms/ping)
			return why
		})
	})
	t.Run("router", func(t *testing.T) {
		cfg := routerTBF
		cfg.BothWays = true
		r := nstest.NewRouted(t, cfg)
		cubicDefault(t, r.Lab)
		addr := labServer(t, r.Lab, 7575)
		startNetserver(t, r.Lab, dir)
		twice(t, func() string {
			fl := startFlent(t, r.Lab, dir)
			ping, _, crashed := fl.wait(t, irttResult{})
			if crashed != "" {
				return crashed
			}
			doc := labRun(t, r.Lab, rrulArgs(addr, 16)...)
			u := doc.Summary.UnderLoad
			if q := u.Queue; q != nil {
				t.Logf("wirespeed's queue: %s, %.1f ms of the %.1f ms increase", q.Where, q.QdiscMs, u.IncreaseMs)
			}
			return agree(t, "wirespeed's loaded p50 against flent's rrul_be ping median, the queues on the router", u.Loaded.All.P50Ms, ping)
		})
	})
}

// startNetserver starts netserver (from dir) in side a of l and checks
// that netperf there has demo mode, skipping t if not.
func startNetserver(t *testing.T, l *lab.Lab, dir string) {
	t.Helper()
	srv := exec.Command(filepath.Join(dir, "netserver"), "-D", "-p", "12865")
	if err := l.Start(lab.A, srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	time.Sleep(300 * time.Millisecond)
	if !demoMode(t, l, dir, l.A.IPv4.String()) {
		t.Skipf("netperf in %s has no demo mode (-D): flent needs netperf built with --enable-demo", dir)
	}
}

// flentRun is a flent rrul_be run under way in side b.
type flentRun struct {
	cmd     *exec.Cmd
	log     *strings.Builder
	out     string
	started time.Time
}

// startFlent starts `flent rrul_be` for 20 s from side b against side
// a's netserver, with netperf from dir first on PATH and cubic on
// netperf's sockets.
func startFlent(t *testing.T, l *lab.Lab, dir string) *flentRun {
	t.Helper()
	f := &flentRun{log: &strings.Builder{}, out: t.TempDir()}
	f.cmd = exec.Command("flent", "rrul_be", "-H", l.A.IPv4.String(), "-l", "20", "-D", f.out, "--test-parameter", "tcp_cong_control=cubic")
	f.cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	f.cmd.Stdout, f.cmd.Stderr = f.log, f.log
	f.started = time.Now()
	if err := l.Start(lab.B, f.cmd); err != nil {
		t.Fatal(err)
	}
	return f
}

// wait waits for flent and returns its ICMP ping median over the
// loaded part and, when ir has round trips, over the seconds irtt ran.
// crashed is why there are none when flent failed in its own
// aggregation of netperf's figures (flent 2.1.1 on a busy host: a flow
// whose first interim result came late leaves a None in a series, and
// its interpolation raises a TypeError), a miss the caller may try
// again; any other failure of flent fails t.
func (f *flentRun) wait(t *testing.T, ir irttResult) (loaded, inIrtt float64, crashed string) {
	t.Helper()
	if err := f.cmd.Wait(); err != nil {
		log := f.log.String()
		if strings.Contains(log, "Traceback") && strings.Contains(log, "aggregate") {
			lines := strings.Split(strings.TrimSpace(log), "\n")
			return 0, 0, fmt.Sprintf("flent crashed aggregating netperf's figures (%s)", strings.TrimSpace(lines[len(lines)-1]))
		}
		t.Fatalf("flent: %v\n%s", err, log)
	}
	files, _ := filepath.Glob(filepath.Join(f.out, "*.flent.gz"))
	if len(files) != 1 {
		t.Fatalf("flent wrote %v\n%s", files, f.log.String())
	}
	// flent's pings run 5 s alone before its flows and 5 s after them
	// (its DELAY); its summary's median counts those too. The median of
	// the loaded part is what the plot shows under load, and what
	// wirespeed's loaded phase measures.
	loaded = flentMedian(t, files[0], "Ping (ms) ICMP", 5, 25)
	if from, to := ir.window(); !from.IsZero() {
		t0 := flentStart(t, files[0])
		inIrtt = flentMedian(t, files[0], "Ping (ms) ICMP", from.Sub(t0).Seconds(), to.Sub(t0).Seconds())
	}
	return loaded, inIrtt, ""
}

// flentMedian is the median of a flent data file's series over the
// samples from..to seconds into the test.
func flentMedian(t *testing.T, path, series string, from, to float64) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		X       []float64             `json:"x_values"`
		Results map[string][]*float64 `json:"results"`
	}
	if err := json.NewDecoder(z).Decode(&d); err != nil {
		t.Fatal(err)
	}
	var v []float64
	for i, x := range d.Results[series] {
		if x != nil && i < len(d.X) && d.X[i] >= from && d.X[i] < to {
			v = append(v, *x)
		}
	}
	if len(v) < 10 {
		t.Fatalf("flent's %q has %d values", series, len(v))
	}
	return median(v)
}

// flentStart is when a flent data file's x values count from: its
// metadata's T0.
func flentStart(t *testing.T, path string) time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Metadata struct {
			T0 string `json:"T0"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(z).Decode(&d); err != nil {
		t.Fatal(err)
	}
	t0, err := time.Parse(time.RFC3339Nano, d.Metadata.T0)
	if err != nil {
		t.Fatalf("flent's T0 %q: %v", d.Metadata.T0, err)
	}
	return t0
}
