package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/nstest"
)

// labRunFails runs `wirespeed run ...` in side b of l, expects it to fail
// with exit code 1 within 20 s, and returns what it printed: the text
// result, if any, and the error.
func labRunFails(t *testing.T, l *lab.Lab, args ...string) string {
	t.Helper()
	stdout, stderr, err := labRunIn(t, l, 20*time.Second, args...)
	var ee *exec.ExitError
	switch {
	case err == nil:
		t.Fatalf("wirespeed run %v succeeded, want a failure\n%s", args, stdout)
	case !errors.As(err, &ee) || ee.ExitCode() != 1:
		t.Fatalf("wirespeed run %v: %v, want exit code 1\n%s", args, err, stderr)
	}
	return stdout + stderr
}

// TestDontFragmentOverSmallMTU sends 1400-byte datagrams over a 1280-byte
// MTU link: without --dont-fragment the kernels fragment and reassemble
// them (their counters say so); with it the run fails at once, naming
// the datagram, the path MTU and the size that fits, in both directions.
func TestDontFragmentOverSmallMTU(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{MTU: 1280})
	addr := labServer(t, l, 7575)
	udp := []string{addr, "-t", "UDP_STREAM", "-b", "20M", "-l", "1", "-i", "0"}

	doc := labRun(t, l, append(udp, "-m", "1400")...)
	if c := doc.Remote.Counters; c != nil {
		t.Logf("-m 1400 without --dont-fragment: sender's kernel made %d fragments, receiver's reassembled %d datagrams", doc.Local.Counters.IP.FragCreates, c.IP.ReasmOKs)
	}
	u := doc.Summary.UDPSummary
	if u == nil || u.PacketsReceived == 0 {
		t.Fatalf("without --dont-fragment nothing arrived: %+v", doc.Summary)
	}
	if c := doc.Remote.Counters; c == nil || c.IP.ReasmOKs < u.PacketsReceived/2 {
		t.Errorf("receiver reassembled %v datagrams of %d received: want them fragmented on the way", reasm(c), u.PacketsReceived)
	}

	// The largest datagram that fits passes whole with --dont-fragment.
	doc = labRun(t, l, append(udp, "-m", "1252", "--dont-fragment")...)
	if u := doc.Summary.UDPSummary; u == nil || u.PacketsReceived == 0 {
		t.Fatalf("-m 1252 --dont-fragment: nothing arrived: %+v", doc.Summary)
	}
	if c := doc.Remote.Counters; c == nil || c.IP.ReasmOKs != 0 {
		t.Errorf("-m 1252 --dont-fragment: receiver reassembled %v datagrams, want none", reasm(c))
	}

	for _, dir := range [][]string{nil, {"-R"}} {
		msg := labRunFails(t, l, append(append(udp, "-m", "1400", "--dont-fragment"), dir...)...)
		for _, want := range []string{"datagram of 1400 bytes", "path MTU of 1280 bytes", "-m 1252", "--dont-fragment"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: error lacks %q:\n%s", dir, want, msg)
			}
		}
		t.Logf("%v: %s", dir, lastLine(msg))
	}
	// UDP_RR: the request is the datagram (-r REQ,RESP).
	msg := labRunFails(t, l, addr, "-t", "UDP_RR", "-r", "1400,1", "-l", "1", "-i", "0", "--dont-fragment")
	if !strings.Contains(msg, "datagram of 1400 bytes") || !strings.Contains(msg, "path MTU of 1280 bytes") {
		t.Errorf("UDP_RR -r 1400 --dont-fragment: error lacks the sizes:\n%s", msg)
	}
	t.Logf("UDP_RR: %s", lastLine(msg))
}

// lastLine is the last line of s: the error, after any text result.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func reasm(c *measure.Counters) any {
	if c == nil {
		return "no counters"
	}
	return c.IP.ReasmOKs
}

// TestBindDevice binds the client to the veth toward the server, which
// works, and to lo, which has no route to the server: a clear failure.
func TestBindDevice(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{})
	addr := labServer(t, l, 7575)
	doc := labRun(t, l, addr, "-l", "0.3", "-i", "0", "--bind-dev", lab.Device(lab.B))
	if doc.Summary.Bytes == 0 || doc.Spec.BindDev != lab.Device(lab.B) {
		t.Errorf("--bind-dev %s: %d bytes, spec bind_dev %q", lab.Device(lab.B), doc.Summary.Bytes, doc.Spec.BindDev)
	}
	t.Logf("--bind-dev %s: %.0f Mbit/s", lab.Device(lab.B), doc.Summary.BitsPerSecond/1e6)
	msg := labRunFails(t, l, addr, "-l", "0.3", "--bind-dev", "lo", "--connect-timeout", "1s")
	t.Logf("--bind-dev lo: %s", strings.TrimSpace(msg))
	if !strings.Contains(msg, "--bind-dev lo") {
		t.Errorf("--bind-dev lo: want an error saying the server is unreachable through lo:\n%s", msg)
	}
	msg = labRunFails(t, l, addr, "-l", "0.3", "--bind-dev", "nosuch0")
	t.Logf("--bind-dev nosuch0: %s", strings.TrimSpace(msg))
	if !strings.Contains(msg, `device "nosuch0": no such device`) {
		t.Errorf("--bind-dev nosuch0: want an error naming the missing device:\n%s", msg)
	}
}
