package client_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/client"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// The data path options end to end on loopback: the client applies the
// local half of the spec, the server the remote half, and the result
// records what each side did.

// checkTotals asserts that every stream's receiver got exactly what its
// sender sent: the modes that take a copy out must not change the bytes
// moved.
func checkTotals(t *testing.T, res result.Result) {
	t.Helper()
	for _, st := range res.Streams {
		if st.Sender.TotalBytes == 0 || st.Sender.TotalBytes != st.Receiver.TotalBytes || !st.Receiver.Complete {
			t.Errorf("stream %d: sender total %d, receiver total %d (complete %v)", st.ID, st.Sender.TotalBytes, st.Receiver.TotalBytes, st.Receiver.Complete)
		}
	}
	for _, w := range report.WarningTexts(res.Warnings) {
		// A window a starved host opened late says so; the totals
		// above are what this test holds, and they hold on a busy host
		// too (the window's timing has tests of its own).
		if strings.Contains(w, "too busy to run it on time") {
			t.Logf("warning (a busy host): %s", w)
			continue
		}
		t.Errorf("warning: %s", w)
	}
}

// sideDP returns the data path record of side s, failing without one.
func sideDP(t *testing.T, res result.Result, s result.Side) *result.DataPath {
	t.Helper()
	info := res.Local
	if s == result.Remote {
		info = res.Remote
	}
	if info.DataPath == nil {
		t.Fatalf("%s side has no data path record", s)
	}
	return info.DataPath
}

func TestZeroCopyAndReceiveModes(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	tests := []struct {
		kind     spec.Kind
		zerocopy string
		rx       string
	}{
		{spec.TCPStream, spec.ZeroCopySendfile, spec.RxCopy},
		{spec.TCPStream, spec.ZeroCopyMsg, spec.RxSplice},
		{spec.TCPStream, spec.ZeroCopyOff, spec.RxDiscard},
		{spec.TCPMaerts, spec.ZeroCopyMsg, spec.RxDiscard},    // the server sends, the client receives
		{spec.TCPBidir, spec.ZeroCopySendfile, spec.RxSplice}, // both do both
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%s", tt.kind, tt.zerocopy, tt.rx), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(tt.kind, 1)
			sp.Duration, sp.Interval = 400*time.Millisecond, 0
			sp.ZeroCopy, sp.Rx = tt.zerocopy, tt.rx
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			checkTotals(t, res)
			for _, d := range res.Directions {
				snd, rcv := sideDP(t, res, d.Sender), sideDP(t, res, d.Receiver)
				if snd.ZeroCopy != tt.zerocopy {
					t.Errorf("%s: sender (%s) used zerocopy %q, want %q", d.Direction, d.Sender, snd.ZeroCopy, tt.zerocopy)
				}
				if rcv.Rx != tt.rx {
					t.Errorf("%s: receiver (%s) used rx %q, want %q", d.Direction, d.Receiver, rcv.Rx, tt.rx)
				}
				if tt.zerocopy != spec.ZeroCopyMsg {
					continue
				}
				// Every MSG_ZEROCOPY send is completed by the end, and on
				// loopback the kernel copied every one on delivery.
				if snd.ZeroCopySends == 0 || snd.ZeroCopyCompleted != snd.ZeroCopySends || snd.ZeroCopyCopied != snd.ZeroCopyCompleted {
					t.Errorf("%s: %d zero-copy sends, %d completed, %d copied", d.Direction, snd.ZeroCopySends, snd.ZeroCopyCompleted, snd.ZeroCopyCopied)
				}
				for _, st := range d.Streams {
					if dp := st.Sender.DataPath; dp == nil || dp.ZeroCopyCompleted == 0 {
						t.Errorf("stream %d: no zero-copy completions recorded for the stream", st.ID)
					}
				}
			}
		})
	}
}

// pinnedThreads lists, for each CPU, how many of this process's threads
// are bound to it alone and last ran on it.
func pinnedThreads(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) != nil || set.Count() != 1 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(task, "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 37 {
			continue
		}
		cpu, _ := strconv.Atoi(f[36]) // field 39, the CPU it last ran on
		if set.IsSet(cpu) {
			out[cpu]++
		}
	}
	return out
}

func allowedCPUs(t *testing.T) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// TestPinning: -T binds each side's loop threads to its CPUs, as the
// kernel reports while they run; the result says which streams ran where
// and how busy those CPUs were.
func TestPinning(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	cpus := allowedCPUs(t)
	local, remote := cpus[len(cpus)-1], cpus[0]
	for _, kind := range []spec.Kind{spec.TCPStream, spec.UDPStream, spec.TCPRR} {
		t.Run(string(kind), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(kind, 2)
			sp.Duration, sp.Interval = 500*time.Millisecond, 0
			if kind == spec.UDPStream {
				sp.SendSize, sp.RateBitsPerSecond = spec.DefaultUDPSize, 50e6
			}
			sp.CPU = true // the pinned CPUs' utilization comes from the CPU figures
			sp.LocalCPUs, sp.RemoteCPUs = spec.NewCPUList([]int{local}), spec.NewCPUList([]int{remote})
			// Look at the threads while the run goes on, keeping the most
			// seen on each CPU: on a loaded machine the loops may start late.
			stop, seen := make(chan struct{}), make(chan map[int]int, 1)
			go func() {
				most := map[int]int{}
				for {
					for cpu, n := range pinnedThreads(t) {
						most[cpu] = max(most[cpu], n)
					}
					select {
					case <-stop:
						seen <- most
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			res, err := c.Run(context.Background(), sp)
			close(stop)
			if err != nil {
				t.Fatal(err)
			}
			// Two streams per side on one CPU each; on one CPU all four.
			threads := <-seen
			want := map[int]int{local: 2}
			want[remote] += 2
			for cpu, n := range want {
				if threads[cpu] < n {
					t.Errorf("%d threads bound to and running on CPU %d, want %d (all: %v)", threads[cpu], cpu, n, threads)
				}
			}
			for _, s := range []struct {
				side result.Side
				cpu  int
			}{{result.Local, local}, {result.Remote, remote}} {
				dp := sideDP(t, res, s.side)
				if len(dp.PinnedCPUs) != 1 || dp.PinnedCPUs[0].CPU != s.cpu || !slices.Equal(dp.PinnedCPUs[0].Streams, []int{1, 2}) {
					t.Errorf("%s pinned %+v, want streams 1 and 2 on CPU %d", s.side, dp.PinnedCPUs, s.cpu)
				} else if dp.PinnedCPUs[0].UtilPct == nil || *dp.PinnedCPUs[0].UtilPct <= 0 {
					t.Errorf("%s: no utilization for pinned CPU %d", s.side, s.cpu)
				}
			}
			for _, st := range res.Streams {
				if st.Sender.DataPath == nil || st.Sender.DataPath.CPU == nil || st.Receiver.DataPath == nil || st.Receiver.DataPath.CPU == nil {
					t.Errorf("stream %d: pinned CPU not recorded on both sides", st.ID)
				}
			}
		})
	}

	// A CPU this process may not use is refused before anything runs.
	c := dial(t, client.Config{Addr: addr})
	sp := shortSpec(spec.TCPStream, 1)
	sp.LocalCPUs = spec.NewCPUList([]int{spec.MaxCPU})
	if _, err := c.Run(context.Background(), sp); err == nil || !strings.Contains(err.Error(), "may run on CPUs") {
		t.Errorf("pinning to CPU %d: %v, want a refusal naming the CPUs allowed", spec.MaxCPU, err)
	}
}

// TestFQRate: TCP's internal pacing holds a stream near the cap on
// loopback (loosely: the machine is shared), and the result records the
// cap, what enforces it and what was achieved; UDP over loopback's
// noqueue qdisc is not paced, and the result says so.
func TestFQRate(t *testing.T) {
	testkit.Serial(t)
	addr, _ := startServer(t, server.Config{})
	const rate = 200e6
	c := dial(t, client.Config{Addr: addr})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration, sp.Omit, sp.Interval = time.Second, 200*time.Millisecond, 0
	sp.FQRateBitsPerSecond = rate
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, res)
	got := res.Summary.BitsPerSecond
	if got > 1.15*rate || got < 0.5*rate {
		t.Errorf("paced to %.3g bit/s, got %.3g", rate, got)
	}
	p := sideDP(t, res, result.Local).Pacing
	if p == nil {
		t.Fatal("no pacing record on the sending side")
	}
	if p.AskedBitsPerSecond != rate || p.GrantedBytesPerSecond != rate/8 || p.HonouredBy != "tcp" || p.Interface != "lo" || p.Qdisc != "noqueue" {
		t.Errorf("pacing record %+v, want %g bit/s asked, %g bytes/s granted, honoured by tcp on lo's noqueue", *p, rate, rate/8)
	}
	if p.AchievedBitsPerSecond != got {
		t.Errorf("achieved %g, the stream got %g", p.AchievedBitsPerSecond, got)
	}
	t.Logf("asked %.4g bit/s, achieved %.4g", rate, got)

	sp = shortSpec(spec.UDPStream, 1)
	sp.SendSize, sp.RateBitsPerSecond, sp.Duration, sp.Interval = spec.DefaultUDPSize, 100e6, 300*time.Millisecond, 0
	sp.FQRateBitsPerSecond = 50e6
	if res, err = c.Run(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
	if p := sideDP(t, res, result.Local).Pacing; p == nil || p.HonouredBy != "" || !strings.Contains(p.Note, "only the fq qdisc paces UDP") {
		t.Errorf("UDP pacing record %+v, want it not honoured on noqueue", p)
	}
	if !slices.ContainsFunc(report.WarningTexts(res.Warnings), func(w string) bool { return strings.Contains(w, "--fq-rate is not enforced") }) {
		t.Errorf("warnings %q lack the unenforced cap", report.WarningTexts(res.Warnings))
	}
}

// TestBusyPoll: both sides set SO_BUSY_POLL on their request/response
// sockets and record what the kernel grants.
func TestBusyPoll(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raising SO_BUSY_POLL above net.core.busy_read needs CAP_NET_ADMIN")
	}
	addr, _ := startServer(t, server.Config{})
	for _, kind := range []spec.Kind{spec.TCPRR, spec.UDPRR, spec.TCPCRR} {
		t.Run(string(kind), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(kind, 1)
			sp.Duration, sp.Interval = 300*time.Millisecond, 0
			sp.BusyPollMicros = 50
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.RRSummary == nil || res.Summary.Transactions == 0 {
				t.Fatal("no transactions")
			}
			for _, s := range []result.Side{result.Local, result.Remote} {
				bp := sideDP(t, res, s).BusyPoll
				if bp == nil || bp.AskedMicros != 50 || bp.GrantedMicros != 50 || bp.SysctlBusyRead == nil {
					t.Errorf("%s busy poll record %+v, want 50 us asked and granted and the sysctls", s, bp)
				} else if bp.NAPIID != 0 {
					t.Errorf("%s: loopback packets came from NAPI id %d", s, bp.NAPIID)
				}
			}
		})
	}
}

// TestGSOGRO: with UDP_SEGMENT on the sender and UDP_GRO on the receiver,
// in both directions, every datagram is counted: at a modest rate none is
// lost, the counts match, and the receiver saw joined buffers.
func TestGSOGRO(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(spec.UDPStream, 1)
			sp.Reverse = reverse
			sp.Duration, sp.Interval = 500*time.Millisecond, 0
			sp.GSOSize, sp.GRO = 1400, true
			sp.SendSize = spec.GSOSendSize(sp.GSOSize)
			sp.RateBitsPerSecond = 200e6
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			u := res.Summary.UDPSummary
			if u == nil || u.PacketsSent == 0 || u.Lost != 0 || u.PacketsReceived != u.PacketsSent || u.Duplicates != 0 {
				t.Fatalf("datagrams %+v: want none lost", u)
			}
			d := res.Directions[0]
			snd, rcv := sideDP(t, res, d.Sender), sideDP(t, res, d.Receiver)
			if snd.GSOSize != 1400 || !rcv.GRO || rcv.Coalesced == 0 {
				t.Errorf("sender GSO %d, receiver GRO %v with %d joined buffers", snd.GSOSize, rcv.GRO, rcv.Coalesced)
			}
			st := d.Streams[0]
			if st.Sender.TotalPackets != st.Receiver.TotalPackets {
				t.Errorf("sender %d datagrams, receiver %d", st.Sender.TotalPackets, st.Receiver.TotalPackets)
			}
			t.Logf("%d datagrams, %d joined receive buffers", u.PacketsSent, rcv.Coalesced)
		})
	}
}

// TestUDPBatches: a UDP_STREAM sender makes one send call per datagram
// unless --send-batch asks for more, on whichever side sends (the server
// with -R learns it from the spec), and the sides' records say what they
// did. Unpaced, every call but one the kernel cut short carries a whole
// batch, so the calls are worked out from the datagrams.
func TestUDPBatches(t *testing.T) {
	// Unpaced both ways: the server may send as fast as it can (-R).
	addr, _ := startServer(t, server.Config{Admission: server.Admission{MaxUDPRateBitsPerSecond: math.Inf(1)}})
	for _, tc := range []struct {
		reverse      bool
		send, recv   int
		wantRecorded bool
		rx           string // --rx-timestamp; "" is an older client's: kernel
	}{
		{false, 1, 1, false, spec.RxTimestampClock},
		{true, 1, 1, false, ""},
		{false, 8, 8, true, ""},
		{true, 8, 8, true, spec.RxTimestampKernel},
	} {
		t.Run(fmt.Sprintf("reverse=%v send=%d recv=%d rx=%s", tc.reverse, tc.send, tc.recv, tc.rx), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(spec.UDPStream, 1)
			sp.Reverse = tc.reverse
			sp.Duration, sp.Interval = 500*time.Millisecond, 0
			sp.SendSize = 256
			sp.SendBatch, sp.RecvBatch = tc.send, tc.recv
			sp.RxTimestamp = tc.rx
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Directions[0]
			st := d.Streams[0]
			snd, rcv := st.Sender, st.Receiver
			t.Logf("sender %d datagrams in %d calls, %d send errors; receiver %d datagrams in %d calls",
				snd.Packets, snd.Calls, snd.SendErrors, rcv.Packets, rcv.Calls)
			if snd.Packets < 1000 {
				t.Fatalf("only %d datagrams sent", snd.Packets)
			}
			// The window's counts are read between two calls, or between
			// the datagrams' count and the calls' of one: one call either way.
			n := int64(tc.send)
			if short := snd.Calls*n - snd.Packets; short < -n || short > (n-1)*(snd.SendErrors+1)+n {
				t.Errorf("sender: %d calls for %d datagrams, %d send errors; want %d datagrams per call", snd.Calls, snd.Packets, snd.SendErrors, n)
			}
			// Received one per call: every call brought one datagram.
			if tc.recv == 1 && (rcv.Calls < rcv.Packets-1 || rcv.Calls > rcv.Packets+1) {
				t.Errorf("receiver: %d calls for %d datagrams; want one each", rcv.Calls, rcv.Packets)
			}
			if tc.recv > 1 && rcv.Calls*int64(tc.recv) < rcv.Packets-int64(tc.recv) {
				t.Errorf("receiver: %d calls for %d datagrams: more than %d a call", rcv.Calls, rcv.Packets, tc.recv)
			}
			// Received in batches: some calls brought more than one datagram.
			// One a call would leave at most one call fewer than datagrams
			// (the window's one-call skew), so want at least two fewer.
			if tc.recv > 1 && rcv.Calls+1 >= rcv.Packets {
				t.Errorf("receiver: %d calls for %d datagrams: want some calls to bring more than one", rcv.Calls, rcv.Packets)
			}
			sdp, rdp := res.Local.DataPath, res.Remote.DataPath
			if d.Sender == result.Remote {
				sdp, rdp = rdp, sdp
			}
			switch {
			case tc.wantRecorded && (sdp == nil || sdp.SendBatch != tc.send || rdp == nil || rdp.RecvBatch != tc.recv):
				t.Errorf("data path records %+v (sender), %+v (receiver): want send batch %d, receive batch %d", sdp, rdp, tc.send, tc.recv)
			case !tc.wantRecorded && (sdp != nil && sdp.SendBatch != 0 || rdp != nil && rdp.RecvBatch != 0):
				t.Errorf("data path records %+v, %+v: want no batch recorded", sdp, rdp)
			}
			wantRx := spec.RxTimestampKernel
			if tc.rx == spec.RxTimestampClock {
				wantRx = spec.RxTimestampClock
			}
			if rdp == nil || rdp.RxTimestamp != wantRx || sdp != nil && sdp.RxTimestamp != "" {
				t.Errorf("receiver's data path %+v, sender's %+v: want arrivals timed by %s on the receiver only", rdp, sdp, wantRx)
			}
			if rcv.JitterMs <= 0 {
				t.Errorf("jitter %g ms, want one from every datagram's arrival", rcv.JitterMs)
			}
		})
	}
}
