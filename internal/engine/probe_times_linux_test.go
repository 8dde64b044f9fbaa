//go:build !wirespeed_portable

package engine

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/measure"
	"wirespeed/internal/testkit"
)

// TestTCPProbeTimesApart: a TCP probe's request/response time starts when
// its handshake ended; the two are separate parts of the probe. The
// test holds the handshake for the kernel's retransmission timeout: the
// probe listener's accept queue has room for one connection (listen
// backlog 0) and a first connection fills it, so the kernel drops the
// probe's SYN (counting it in TcpExt.ListenOverflows); once it has, the
// test takes the first connection off the queue and the probe's SYN,
// sent again after the initial RTO of 1 s, connects. The handshake took
// 1 s or more; the request and response of one byte each on loopback a
// moment. The two are disjoint parts of the probe's call, so together
// they cannot exceed the call's time as the test's own clock measured
// it; a request/response time counted from before the handshake is at
// least the handshake's second again, and does.
func TestTCPProbeTimesApart(t *testing.T) {
	const tries = 3
	for try := 1; ; try++ {
		connect, rtt, wall := heldHandshakeProbe(t)
		t.Logf("handshake %v, request/response %v, the probe's call %v", time.Duration(connect), time.Duration(rtt), wall)
		if connect < int64(900*time.Millisecond) {
			// The probe's SYN came only after the queue had room again
			// (a starved host ran the probe late): the handshake was not
			// held, and the two times are too close to tell apart.
			if try < tries {
				continue
			}
			testkit.SkipStarved(t, fmt.Sprintf("the probe's handshake was never held by the full queue in %d tries (the last took %v)", tries, time.Duration(connect)))
			return
		}
		if rtt <= 0 {
			t.Fatalf("the probe got no answer: round trip %d", rtt)
		}
		if sum := time.Duration(connect + rtt); sum > wall {
			t.Errorf("handshake %v and request/response %v add up to %v, more than the probe's call took (%v): the request/response counts the handshake",
				time.Duration(connect), time.Duration(rtt), sum, wall)
		}
		return
	}
}

// heldHandshakeProbe makes one probe against a listener whose full accept
// queue holds the probe's handshake (TestTCPProbeTimesApart), and answers
// it.
func heldHandshakeProbe(t *testing.T) (connect, rtt int64, wall time.Duration) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "probe listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	filler, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	overflows := func() int64 {
		c, err := measure.ReadNetCounters("/proc")
		if err != nil {
			t.Fatal(err)
		}
		return c["TcpExt.ListenOverflows"]
	}
	before := overflows()

	type times struct {
		connect, rtt int64
		wall         time.Duration
	}
	done := make(chan times, 1)
	p := NewTCPProber("tcp4", addr, Options{}, time.Second, time.Now(), 1)
	go func() {
		start := time.Now()
		c, r := p.probe()
		done <- times{c, r, time.Since(start)}
	}()
	// Wait for the kernel to drop the probe's SYN (or for 2 s: the
	// caller tells a handshake that was not held by its time).
	for deadline := time.Now().Add(2 * time.Second); overflows() == before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// Make room: the first connection off the queue, then the probe's
	// own, answered.
	for range 2 {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if c.RemoteAddr().String() == filler.LocalAddr().String() {
			c.Close()
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		if _, err := c.Read(b[:]); err == nil {
			c.Write(b[:])
		}
		c.Close()
		break
	}
	r := <-done
	return r.connect, r.rtt, r.wall
}
