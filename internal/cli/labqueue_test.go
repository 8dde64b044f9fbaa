//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// TestLabUpShapingUsage: lab up's --latency, --queue, --burst and
// --one-way are listed in its help and refuse what a tbf cannot be, each
// saying what to write instead, before any namespace is made.
func TestLabUpShapingUsage(t *testing.T) {
	_, help, _ := execute(t, context.Background(), "lab", "up", "--help")
	in := helpSections(help)
	for _, f := range []string{"latency", "queue", "burst", "one-way"} {
		if len(in[f]) != 1 {
			t.Errorf("lab up --help lists --%s %d times, want once", f, len(in[f]))
		}
	}
	for _, tt := range []struct {
		args     []string
		inStderr string
	}{
		{[]string{"--latency", "100ms"}, "add --rate"},
		{[]string{"--rate", "20mbit", "--latency", "100ms", "--queue", "64K"}, "give one"},
		{[]string{"--rate", "20mbit", "--latency", "soon"}, "like 100ms"},
		{[]string{"--rate", "20mbit", "--queue", "1000"}, "use 1564 bytes or more"},
		{[]string{"--rate", "20mbit", "--burst", "-5"}, "like 64K"},
		{[]string{"--rate", "20mbit", "--one-way", "c"}, "use a (shape a's egress"},
		{[]string{"--one-way", "b"}, "needs --rate"},
		{[]string{"--hosts", "3", "--rate", "20mbit", "--one-way", "a"}, "two-host lab"},
		{[]string{"--hosts", "3", "--latency", "100ms"}, "--host-rate in a mesh lab"},
	} {
		args := append([]string{"lab", "up", "--name", "never"}, tt.args...)
		code, _, stderr := runMain(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// rootTBF reads the root tbf of dev in the namespace nsName from the
// kernel; nil when there is none.
func rootTBF(t *testing.T, nsName, dev string) *netlink.Tbf {
	t.Helper()
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		t.Fatalf("%s in %s: %v", dev, nsName, err)
	}
	qs, err := h.QdiscList(link)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if tbf, ok := q.(*netlink.Tbf); ok && q.Attrs().Parent == netlink.HANDLE_ROOT {
			return tbf
		}
	}
	return nil
}

// TestLabUpQueue: lab up --rate 20mbit --burst 16K --latency 100ms makes
// the cookbook's bufferbloat tbf on both ends without tc: the kernel's
// limit is 2,500,000 B/s x 0.1 s + 16,384 = 266,384 bytes (tc's for
// `rate 20mbit burst 16kb latency 100ms`), and lab up and lab status say
// so; --queue 64K is a limit of 65,536. A lab of --rate alone shows no
// queue line (TestLabCommands' lab up prints none).
func TestLabUpQueue(t *testing.T) {
	nstest.RequireRoot(t)
	for _, tt := range []struct {
		flags   []string
		limit   uint32
		printed string
	}{
		// 266,384 bytes at 2.5 MB/s: 106.55 ms.
		{[]string{"--burst", "16K", "--latency", "100ms"}, 266_384, "266384 bytes, 107 ms at 20.0 Mbits/sec"},
		// 65,536 bytes at 2.5 MB/s: 26.2 ms.
		{[]string{"--queue", "64K"}, 65_536, "65536 bytes, 26 ms at 20.0 Mbits/sec"},
		// --rate alone: the bucket 2,500,000/250 = 10,000 and 5 ms,
		// 12,500, more; no queue line.
		{nil, 22_500, ""},
	} {
		name := fmt.Sprintf("q%d", os.Getpid())
		t.Cleanup(func() { lab.Remove(name) })
		args := append([]string{"lab", "up", "--name", name, "--server=false", "--rate", "20mbit"}, tt.flags...)
		code, out, stderr := runMain(t, args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		for _, s := range []lab.HostName{lab.A, lab.B} {
			tbf := rootTBF(t, lab.Namespace(name, s), lab.Device(s))
			if tbf == nil || tbf.Rate != 2_500_000 || tbf.Limit != tt.limit {
				t.Errorf("%q: side %s's tbf %+v, want 2500000 B/s and a limit of %d", tt.flags, s, tbf, tt.limit)
			}
			if want := fmt.Sprintf("queue:  tbf on %s (%s): %s", lab.Device(s), s, tt.printed); tt.printed != "" && !strings.Contains(out, want) {
				t.Errorf("%q: lab up printed no %q:\n%s", tt.flags, want, out)
			}
		}
		status := ""
		code, status, stderr = runMain(t, "lab", "status", "--name", name)
		if want := "queue:  tbf on wst-b (b): " + tt.printed; code != ExitOK || tt.printed != "" && !strings.Contains(status, want) {
			t.Errorf("%q: lab status: exit %d, stderr %q, no %q:\n%s", tt.flags, code, stderr, want, status)
		}
		if tt.printed == "" && (strings.Contains(out, "queue:") || strings.Contains(status, "queue:")) {
			t.Errorf("--rate alone: lab up or lab status shows a queue line:\n%s\n%s", out, status)
		}
		if code, _, stderr := runMain(t, "lab", "down", "--name", name); code != ExitOK {
			t.Fatalf("lab down: %s", stderr)
		}
	}
}

// TestLabUpOneWay: lab up --rate 50mbit --one-way b shapes b's egress
// only: the kernel shows a tbf on wst-b and none on wst-a; a TCP stream
// from the client in b gets the payload rate at the limit, one from the
// server in a (TCP_MAERTS) far more; status shows the rate on b alone.
func TestLabUpOneWay(t *testing.T) {
	testkit.Serial(t)
	nstest.RequireRoot(t)
	name := fmt.Sprintf("w%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(name) })
	const rate = 50e6
	code, out, stderr := runMain(t, "lab", "up", "--name", name, "--rate", "50mbit", "--one-way", "b")
	if code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "rate limits per host") || strings.Contains(out, "wst-a  10.77.0.1       fd00:77::1  rate") ||
		!strings.Contains(out, "wst-b  10.77.0.2       fd00:77::2  rate 50.0 Mbits/sec") {
		t.Errorf("lab up printed:\n%s", out)
	}
	if tbf := rootTBF(t, lab.Namespace(name, lab.A), "wst-a"); tbf != nil {
		t.Errorf("wst-a has a tbf: %+v; only b's egress is shaped", tbf)
	}
	if tbf := rootTBF(t, lab.Namespace(name, lab.B), "wst-b"); tbf == nil || tbf.Rate*8 != rate {
		t.Fatalf("wst-b's tbf: %+v, want %.0f bits/s", tbf, rate)
	}

	run := func(args ...string) result.Document {
		t.Helper()
		code, out, stderr := runMain(t, append([]string{"lab", "run", "--name", name, "--"}, args...)...)
		if code != ExitOK {
			t.Fatalf("lab run %q: exit %d: %s", args, code, stderr)
		}
		var doc result.Document
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("lab run --json: %v\n%s", err, out)
		}
		return doc
	}
	// tbf counts whole frames: 1448 bytes of payload in a 1514-byte frame.
	want := rate * 1448 / 1514
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		doc := run("-l", "2", "-i", "0", "--cpu", "--json")
		var starved string
		if c := doc.Summary.LocalCPU; c != nil {
			starved = testkit.CPUStarved(c.UtilPct, c.BusiestCPUPct, c.StealPct, c.OtherProcessesUtilPct)
		}
		return testkit.RateAttempt{Got: doc.Summary.BitsPerSecond, Want: want, Tol: 0.05, Starved: starved,
			Detail: "b -> a through b's 50 Mbit/s tbf, against the payload rate at the limit"}
	})
	doc := run("-t", "TCP_MAERTS", "-l", "1", "-i", "0", "--json")
	t.Logf("a -> b (TCP_MAERTS, unshaped): %.1f Mbit/s", doc.Summary.BitsPerSecond/1e6)
	if doc.Summary.BitsPerSecond < 2*rate {
		t.Errorf("a -> b (TCP_MAERTS) = %.1f Mbit/s: want far above b's limit of %.0f, a's egress is not shaped", doc.Summary.BitsPerSecond/1e6, rate/1e6)
	}
}
