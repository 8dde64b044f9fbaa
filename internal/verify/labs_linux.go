package verify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"wirespeed/internal/lab"
	"wirespeed/internal/result"
)

// port is where the labs' wirespeed servers listen.
const port = 7575

// Run builds the labs one after another, runs the checks in each and
// removes each lab before the next. It needs root. An interrupted run
// (ctx) returns the checks done so far with ctx's error.
func Run(ctx context.Context, cfg Config) (Report, error) {
	r := Report{Started: time.Now(), Kernel: kernel()}
	defer func() { r.ElapsedS = time.Since(r.Started).Seconds() }()
	if os.Geteuid() != 0 {
		return r, errors.New("verify builds labs of network namespaces, which needs root: run it as root (sudo wirespeed verify)")
	}
	if cfg.Name == "" {
		cfg.Name = "wsv"
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	for _, stage := range []func(context.Context, Config, *Report) error{shapedLink, offloadsOff, routedQueue} {
		if err := stage(ctx, cfg, &r); err != nil {
			r.Finish()
			return r, err
		}
	}
	r.Finish()
	r.ElapsedS = time.Since(r.Started).Seconds()
	return r, nil
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// startServer starts `wirespeed serve` in side a of l with lab's own
// StartServer (a log under lab.StateDir, side b's connection awaited)
// and returns its address; the lab's Down stops it.
func startServer(ctx context.Context, cfg Config, l *lab.Lab) (string, error) {
	addr := netip.AddrPortFrom(l.A.IPv4, port).String()
	cmd := exec.Command(cfg.Exe, "serve", "--listen", addr, "--log-level", "warn")
	if _, err := l.StartServer(ctx, cmd, addr, ""); err != nil {
		return "", err
	}
	return addr, nil
}

// run runs `wirespeed run ADDR ARGS --json` in side s of l and returns
// its document and the command as a user would type it. during, when
// not nil, runs while the test does, given the process's start.
func run(ctx context.Context, cfg Config, l *lab.Lab, s lab.HostName, addr string, args []string, during func(started time.Time)) (result.Document, string, error) {
	argv := append([]string{"run", addr}, args...)
	shown := "wirespeed " + strings.Join(argv, " ")
	fmt.Fprintf(cfg.Progress, "  %s\n", shown)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.Command(cfg.Exe, append(argv, "--json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := l.Start(s, cmd); err != nil {
		return result.Document{}, shown, err
	}
	started := time.Now()
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	defer stop()
	if during != nil {
		during(started)
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return result.Document{}, shown, fmt.Errorf("%s: %w", shown, ctx.Err())
		}
		return result.Document{}, shown, fmt.Errorf("%s: %v: %s", shown, err, strings.TrimSpace(stderr.String()))
	}
	var doc result.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return result.Document{}, shown, fmt.Errorf("%s printed no results document: %w", shown, err)
	}
	return doc, shown, nil
}

// linkCounters reads a device's packet counters in side s of l by
// netlink: the kernel's own count, not wirespeed's reading of it.
func linkCounters(l *lab.Lab, s lab.HostName, dev string) (tx, rx uint64, err error) {
	err = l.Do(s, func() error {
		link, err := netlink.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("read %s's counters: %w", dev, err)
		}
		st := link.Attrs().Statistics
		if st == nil {
			return fmt.Errorf("%s has no counters", dev)
		}
		tx, rx = st.TxPackets, st.RxPackets
		return nil
	})
	return tx, rx, err
}

// qdiscStats are a root qdisc's counters: what it sent (a GSO packet
// counts as its segments, each with its headers: frames) and dropped.
type qdiscStats struct {
	packets, bytes, drops uint64
}

// qdiscCounters reads the root qdisc of dev in side s of l by netlink.
func qdiscCounters(l *lab.Lab, s lab.HostName, dev string) (q qdiscStats, err error) {
	err = l.Do(s, func() error {
		link, err := netlink.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("find %s: %w", dev, err)
		}
		qs, err := netlink.QdiscList(link)
		if err != nil {
			return fmt.Errorf("read %s's qdiscs: %w", dev, err)
		}
		for _, qd := range qs {
			a := qd.Attrs()
			if a.Parent != netlink.HANDLE_ROOT || a.Statistics == nil || a.Statistics.Basic == nil || a.Statistics.Queue == nil {
				continue
			}
			q = qdiscStats{packets: uint64(a.Statistics.Basic.Packets), bytes: a.Statistics.Basic.Bytes, drops: uint64(a.Statistics.Queue.Drops)}
			return nil
		}
		return fmt.Errorf("%s has no root qdisc with counters", dev)
	})
	return q, err
}

// procStatBusy reads the first line of stat under procRoot (/proc): the jiffies every CPU was
// busy (all but idle and iowait) and in all. Read here, by verify's own
// few lines, not by wirespeed's CPU sampler, whose figure it checks.
func procStatBusy(procRoot string) (busy, total uint64, err error) {
	path := filepath.Join(procRoot, "stat")
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, fmt.Errorf("%s is empty", path)
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("%s's first line %q is not the cpu totals", path, sc.Text())
	}
	// user nice system idle iowait irq softirq steal (guest and
	// guest_nice are in user and nice already).
	for i, f := range fields[1:9] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %q: %w", path, f, err)
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, nil
}
