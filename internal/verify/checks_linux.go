package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// The labs' shapes. Each truth below is worked out from them.
const (
	// shapedRate is the tbf on both ends of the first lab's veth pair.
	shapedRate = 100e6
	// routedRate and routedLimit are the router's tbf each way in the
	// third lab: 250,000 bytes at 2.5 MB/s is 100 ms of queue, a
	// bufferbloated path.
	routedRate  = 20e6
	routedLimit = 250000
	// jumboMTU is the second lab's MTU, with TSO and GSO off.
	jumboMTU = 9000
	// irttPort is where irtt's server listens beside wirespeed's.
	irttPort = 2112
)

// up removes a lab of name left by an interrupted verify, then makes it.
func up(ctx context.Context, cfg Config, c lab.Config) (*lab.Lab, error) {
	lab.Remove(c.Name)
	fmt.Fprintf(cfg.Progress, "lab %s: mtu %d, tbf %g Mbit/s, features %v\n", c.Name, max(c.MTU, 1500), float64(c.RateBitsPerSecond)/1e6, c.Features)
	l, err := lab.Up(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("make the lab %s: %w", c.Name, err)
	}
	return l, nil
}

// measured fills c from a run: its figure, or why there is none.
func measured(c Check, shown string, err error, figure func() (float64, error)) Check {
	c.Command = shown
	if err != nil {
		c.Failed = err.Error()
		return c
	}
	v, ferr := figure()
	if ferr != nil {
		c.Failed = ferr.Error()
		return c
	}
	c.Measured = v
	return c
}

// shapedLink: a tbf of 100 Mbit/s with 20 ms of queue on both ends. TCP's goodput, one
// stream and four, against the payload the tbf lets through: it counts
// each segment's Ethernet frame (MSS + TCP/IP headers + 14 bytes).
func shapedLink(ctx context.Context, cfg Config, r *Report) error {
	// A queue of 20 ms, 250 KB: room for four cubic flows' sawtooth, so
	// that the goodput is the link's and not how the flows share drops
	// from a switch-port queue (TBF's default, 5 ms: -P 4 read 84-92
	// Mbit/s through it on a busy host).
	l, err := up(ctx, cfg, lab.Config{Name: cfg.Name + "-t", RateBitsPerSecond: shapedRate, Queue: lab.Queue{Latency: 20 * time.Millisecond}})
	if err != nil {
		return err
	}
	defer l.Down()
	addr, err := startServer(ctx, cfg, l)
	if err != nil {
		return err
	}
	m := float64(mss(1500))
	truth := shapedRate * m / (m + tcpHeader + ipv4Header + ethHeader) / 1e6
	truthIs := fmt.Sprintf("the tbf's %g Mbit/s on the veth pair, times MSS %.0f over its %.0f-byte frame (TCP/IP headers with timestamps, 14 of Ethernet)",
		shapedRate/1e6, m, m+tcpHeader+ipv4Header+ethHeader)
	// cubic, whatever the host's default: bbr on veth and tbf
	// retransmits spuriously and swings; the first second, slow start,
	// is left out.
	for _, p := range []int{1, 4} {
		name, fig, args := "tcp-throughput", "TCP goodput, 1 stream", []string{"-l", "3", "--omit", "1", "-i", "0", "--cc", "cubic", "--cpu=false"}
		if p > 1 {
			name, fig, args = "tcp-streams", fmt.Sprintf("TCP goodput, %d streams", p), append(args, "-P", strconv.Itoa(p))
		}
		// The one-stream run also reads the client side's tbf, which
		// counts what it sends as frames (a TSO packet as its
		// segments), at 1.25 s and 2.75 s: the steady middle of the
		// window wirespeed counts its frames over (1 s to 3 s).
		var q [2]qdiscStats
		var qerr error
		during := func(started time.Time) {
			for i, at := range []time.Duration{1250 * time.Millisecond, 2750 * time.Millisecond} {
				select {
				case <-time.After(time.Until(started.Add(at))):
				case <-ctx.Done():
					return
				}
				if q[i], err = qdiscCounters(l, lab.B, lab.Device(lab.B)); err != nil {
					qerr = err
				}
			}
		}
		if p > 1 {
			during = nil
		}
		doc, shown, err := run(ctx, cfg, l, lab.B, addr, args, during)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.Add(measured(Check{Name: name, Figure: fig, Unit: "Mbit/s",
			Truth: truth, TruthIs: truthIs, Tolerance: Tolerance{Low: -3, High: 2, Relative: true}}, shown, err,
			func() (float64, error) { return doc.Summary.BitsPerSecond / 1e6, nil }))
		if p > 1 {
			continue
		}
		r.Add(wireFrames(doc, shown, err, q, qerr))
	}
	return nil
}

// wireFrames: the frames the sender's side put on the wire (TSO on, so
// its device counted a few large packets), per second, against the
// client side's tbf's own packet count over the steady middle of the
// run, read by verify.
func wireFrames(doc result.Document, shown string, err error, q [2]qdiscStats, qerr error) Check {
	c := measured(Check{Name: "wire-frames", Figure: "sender's frames on the wire, TSO on", Unit: "frames/s",
		TruthIs:   fmt.Sprintf("%s's tbf: packets sent (a GSO packet counts as its segments) from 1.25 s to 2.75 s of the run, by netlink", lab.Device(lab.B)),
		Tolerance: Tolerance{Low: -3, High: 3, Relative: true}}, shown, err,
		func() (float64, error) {
			if doc.Summary.SenderWireFramesPerSecond == 0 {
				return 0, fmt.Errorf("the result has no frames on the wire")
			}
			return doc.Summary.SenderWireFramesPerSecond, nil
		})
	switch {
	case c.Failed != "":
	case qerr != nil:
		c.Failed = "the tbf's counters: " + qerr.Error()
	case q[1].packets > q[0].packets:
		c.Truth = float64(q[1].packets-q[0].packets) / 1.5
	default:
		c.Failed = "the tbf sent nothing over the run's middle"
	}
	return c
}

// offloadsOff: MTU 9000 with TSO and GSO off on both ends, unshaped.
// Bytes per packet on the sender's device against a full frame; UDP_RR's
// transactions against the requests the client's device sent; the host's
// CPU against /proc/stat.
func offloadsOff(ctx context.Context, cfg Config, r *Report) error {
	l, err := up(ctx, cfg, lab.Config{Name: cfg.Name + "-o", MTU: jumboMTU, Features: map[string]bool{"tso": false, "gso": false}})
	if err != nil {
		return err
	}
	defer l.Down()
	addr, err := startServer(ctx, cfg, l)
	if err != nil {
		return err
	}

	m := float64(mss(jumboMTU))
	// Each write 14 whole segments: a 128 KB write's last segment goes
	// out short whenever the receiver keeps up (8834 bytes a packet on a
	// quiet host, 131072/15 + 66), so the truth is a full frame only
	// for writes that are whole segments.
	msg := 14 * mss(jumboMTU)
	doc, shown, err := run(ctx, cfg, l, lab.B, addr, []string{"-m", strconv.Itoa(msg), "-l", "2", "-i", "0", "--cpu=false"}, nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.Add(measured(Check{Name: "bytes-per-packet", Figure: "sender's device, bytes per packet", Unit: "bytes",
		Truth:     m + tcpHeader + ipv4Header + ethHeader,
		TruthIs:   fmt.Sprintf("a full frame at MTU %d without segmentation offload, writes of 14 of them (%d bytes): MSS %.0f + 52 bytes of TCP/IP headers + 14 of Ethernet", jumboMTU, msg, m),
		Tolerance: Tolerance{Low: -1, High: 1, Relative: true}}, shown, err,
		func() (float64, error) {
			if doc.Summary.SenderWireBytesPerPacket == 0 {
				return 0, fmt.Errorf("the result has no device figures")
			}
			return doc.Summary.SenderWireBytesPerPacket, nil
		}))

	// UDP_RR: one datagram each way a transaction, so the client's
	// device sends one packet per transaction, and a few of the control
	// connection's.
	tx0, _, cerr := linkCounters(l, lab.B, lab.Device(lab.B))
	doc, shown, err = run(ctx, cfg, l, lab.B, addr, []string{"-t", "UDP_RR", "-l", "2", "-i", "0", "--cpu=false"}, nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	tx1, _, cerr2 := linkCounters(l, lab.B, lab.Device(lab.B))
	c := measured(Check{Name: "rr-transactions", Figure: "UDP_RR requests sent, whole run", Unit: "packets",
		Truth:     float64(tx1 - tx0),
		TruthIs:   fmt.Sprintf("%s's tx_packets by netlink before and after the run (the control connection's few packets included)", lab.Device(lab.B)),
		Tolerance: Tolerance{Low: -1, High: 1, Relative: true}}, shown, err,
		func() (float64, error) {
			if doc.Summary.RRSummary == nil {
				return 0, fmt.Errorf("the result has no request/response summary")
			}
			return float64(doc.Summary.ClientTransactions), nil
		})
	if cerr != nil || cerr2 != nil {
		c.Failed = fmt.Sprint("the device's counters: ", cerr, cerr2)
	}
	r.Add(c)

	// The host's CPU: /proc/stat read here over the run's steady middle
	// (1 s to 3 s of 4), the tool's over its whole window.
	var busy, total [2]uint64
	var serr error
	doc, shown, err = run(ctx, cfg, l, lab.B, addr, []string{"-l", "4", "-i", "0", "--cpu"}, func(started time.Time) {
		for i, at := range []time.Duration{time.Second, 3 * time.Second} {
			select {
			case <-time.After(time.Until(started.Add(at))):
			case <-ctx.Done():
				return
			}
			var e error
			busy[i], total[i], e = procStatBusy(measure.DefaultProcRoot)
			if e != nil {
				serr = e
			}
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c = measured(Check{Name: "cpu-host", Figure: "host CPU busy, local side", Unit: "% of all CPUs",
		TruthIs:   "the busy jiffies (all but idle and iowait) of the host's /proc/stat, read by verify from 1 s to 3 s of the 4 s run",
		Tolerance: Tolerance{Low: -10, High: 10}}, shown, err,
		func() (float64, error) {
			if doc.Summary.LocalCPU == nil {
				return 0, fmt.Errorf("the result has no CPU figures")
			}
			return doc.Summary.LocalCPU.UtilPct, nil
		})
	switch {
	case serr != nil:
		c.Failed = "read /proc/stat: " + serr.Error()
	case total[1] > total[0]:
		c.Truth = 100 * float64(busy[1]-busy[0]) / float64(total[1]-total[0])
	default:
		c.Failed = "the host's /proc/stat did not move over the run"
	}
	r.Add(c)
	return nil
}

// routedQueue: a router between the hosts with a tbf of 20 Mbit/s and
// 100 ms of queue each way. UDP through it at twice the rate: goodput
// against the tbf's payload, loss against the router qdisc's own drop
// count. Then the idle round trip against irtt's, and RRUL's loaded
// round trip against what the two queues can hold.
func routedQueue(ctx context.Context, cfg Config, r *Report) error {
	name := cfg.Name + "-r"
	lab.Remove(name)
	fmt.Fprintf(cfg.Progress, "routed lab %s: tbf %g Mbit/s, queue %d bytes, each way\n", name, routedRate/1e6, routedLimit)
	rl, err := lab.UpRouted(ctx, lab.RoutedConfig{Name: name, RateBitsPerSecond: routedRate, LimitBytes: routedLimit, BothWays: true})
	if err != nil {
		return fmt.Errorf("make the routed lab %s: %w", name, err)
	}
	l := rl.Lab
	defer l.Down()
	addr, err := startServer(ctx, cfg, l)
	if err != nil {
		return err
	}

	// UDP from a to b (-R: the server sends), through the router's
	// egress toward b.
	q0, qerr := qdiscCounters(l, lab.Router, lab.RouterDeviceB)
	doc, shown, err := run(ctx, cfg, l, lab.B, addr, []string{"-t", "UDP_STREAM", "-R", "-b", "40M", "-l", "3", "-i", "0", "--cpu=false"}, nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	q1, qerr2 := qdiscCounters(l, lab.Router, lab.RouterDeviceB)
	const dgram = 1472
	frame := float64(dgram + udpHeader + ipv4Header + ethHeader)
	r.Add(measured(Check{Name: "udp-throughput", Figure: "UDP goodput at twice the link's rate", Unit: "Mbit/s",
		Truth:     routedRate * dgram / frame / 1e6,
		TruthIs:   fmt.Sprintf("the router's tbf of %g Mbit/s times %d bytes of payload over its %.0f-byte frame", routedRate/1e6, dgram, frame),
		Tolerance: Tolerance{Low: -3, High: 2, Relative: true}}, shown, err,
		func() (float64, error) { return doc.Summary.BitsPerSecond / 1e6, nil }))
	c := measured(Check{Name: "udp-loss", Figure: "UDP datagrams lost", Unit: "%",
		TruthIs:   fmt.Sprintf("the router's tbf on %s: drops over drops and packets sent, by netlink before and after the run", lab.RouterDeviceB),
		Tolerance: Tolerance{Low: -5, High: 5, Relative: true}}, shown, err,
		func() (float64, error) {
			if doc.Summary.UDPSummary == nil {
				return 0, fmt.Errorf("the result has no UDP summary")
			}
			return doc.Summary.LossPct, nil
		})
	switch {
	case qerr != nil || qerr2 != nil:
		c.Failed = fmt.Sprint("the router's qdisc: ", qerr, qerr2)
	case q1.drops > q0.drops:
		d := float64(q1.drops - q0.drops)
		c.Truth = 100 * d / (d + float64(q1.packets-q0.packets))
	default:
		c.Failed = "the router's tbf dropped nothing: the path was not overloaded"
	}
	r.Add(c)

	// irtt beside RRUL's idle phase (4 s), from 0.5 s into the run for
	// 3 s, where irtt is installed: both sample the same idle path at the
	// same time, so a busy host moves both.
	var irttMs float64
	irtt, irttSkip, irttErr := startIrtt(l)
	if irtt != nil {
		defer irtt.stop()
	}
	doc, shown, err = run(ctx, cfg, l, lab.B, addr, []string{"-t", "RRUL", "--idle", "4", "-l", "5", "-i", "0", "--cpu=false"}, func(started time.Time) {
		select {
		case <-time.After(time.Until(started.Add(500 * time.Millisecond))):
		case <-ctx.Done():
			return
		}
		if irtt != nil {
			irttMs, irttErr = irtt.median(ctx, cfg, l)
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	ul := func() (*result.UnderLoad, error) {
		if doc.Summary.UnderLoad == nil {
			return nil, fmt.Errorf("the result has no RRUL summary")
		}
		return doc.Summary.UnderLoad, nil
	}
	c = measured(Check{Name: "rtt-idle", Figure: "RRUL's idle UDP round trip, median", Unit: "ms",
		Truth: irttMs, TruthIs: "irtt's median round trip over 3 s at 10 ms intervals on the same path, run during RRUL's 4 s idle phase",
		Tolerance: Tolerance{Low: -30, High: 30, Relative: true}}, shown, err,
		func() (float64, error) {
			u, err := ul()
			if err != nil {
				return 0, err
			}
			return u.Idle.UDP.P50Ms, nil
		})
	switch {
	case irttSkip != "":
		c.Skipped = irttSkip
	case irttErr != nil && c.Failed == "":
		c.Failed = irttErr.Error()
	}
	r.Add(c)

	queueMs := 1000 * float64(routedLimit) / (routedRate / 8)
	c = measured(Check{Name: "rrul-loaded", Figure: "RRUL's loaded UDP round trip, p99", Unit: "ms",
		TruthIs: fmt.Sprintf("the idle median plus what the router's two queues hold, %d bytes each at %g Mbit/s (%.0f ms each): a bound the p99 comes near",
			routedLimit, routedRate/1e6, queueMs),
		Tolerance: Tolerance{Low: -40, High: 5, Relative: true}}, shown, err,
		func() (float64, error) {
			u, err := ul()
			if err != nil {
				return 0, err
			}
			return u.Loaded.UDP.P99Ms, nil
		})
	if c.Failed == "" {
		if u, err := ul(); err == nil {
			c.Truth = u.Idle.UDP.P50Ms + 2*queueMs
		}
	}
	r.Add(c)
	return nil
}

// irttServer is irtt's server in side a of a lab.
type irttServer struct {
	bin, addr string
	cmd       *exec.Cmd
}

// startIrtt starts irtt's server in side a of l; skip says why there is
// nothing to compare with (no irtt installed).
func startIrtt(l *lab.Lab) (s *irttServer, skip string, err error) {
	bin, err := exec.LookPath("irtt")
	if err != nil {
		return nil, "irtt is not installed (Debian package irtt)", nil
	}
	s = &irttServer{bin: bin, addr: net.JoinHostPort(l.A.IPv4.String(), strconv.Itoa(irttPort))}
	s.cmd = exec.Command(bin, "server", "-b", s.addr)
	if err := l.Start(lab.A, s.cmd); err != nil {
		return nil, "", fmt.Errorf("irtt server: %w", err)
	}
	return s, "", nil
}

func (s *irttServer) stop() { s.cmd.Process.Kill(); s.cmd.Wait() }

// median runs irtt's client in side b of l for 3 s at 10 ms intervals and
// returns the median round trip in ms.
func (s *irttServer) median(ctx context.Context, cfg Config, l *lab.Lab) (float64, error) {
	dir, err := os.MkdirTemp("", "wirespeed-verify-irtt")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "irtt.json")
	fmt.Fprintf(cfg.Progress, "  irtt client -i 10ms -d 3s %s\n", s.addr)
	cli := exec.CommandContext(ctx, s.bin, "client", "-i", "10ms", "-d", "3s", "-Q", "-o", out, s.addr)
	var log strings.Builder
	cli.Stdout, cli.Stderr = &log, &log
	if err := l.Start(lab.B, cli); err != nil {
		return 0, fmt.Errorf("irtt client: %w", err)
	}
	if err := cli.Wait(); err != nil {
		return 0, fmt.Errorf("irtt client: %v: %s", err, strings.TrimSpace(log.String()))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	var d struct {
		RoundTrips []struct {
			Lost  string `json:"lost"`
			Delay struct {
				RTT int64 `json:"rtt"`
			} `json:"delay"`
		} `json:"round_trips"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return 0, fmt.Errorf("irtt's output: %w", err)
	}
	var rtts []float64
	for _, rt := range d.RoundTrips {
		if rt.Lost == "false" {
			rtts = append(rtts, float64(rt.Delay.RTT)/1e6)
		}
	}
	if len(rtts) == 0 {
		return 0, fmt.Errorf("irtt had no round trip back")
	}
	slices.Sort(rtts)
	n := len(rtts)
	if n%2 == 1 {
		return rtts[n/2], nil
	}
	return (rtts[n/2-1] + rtts[n/2]) / 2, nil
}
