//go:build !wirespeed_portable

package engine

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestSlowReceiverNotPreempted: a stream receiver that waits for most of
// its time (a message every 20 ms, as one of many slow clients of a
// server) must wait in a system call Go's scheduler knows of, not in a raw
// one: there sysmon takes it for a goroutine running on one tick and
// preempts it with a SIGURG every 10 ms of a wait, once a wait below. The
// receiver's first long wait is raw (it cannot know it will be long), so
// a few signals are allowed.
// The process's SIGURGs are counted through os/signal, which the runtime
// tells of its preemption signals too; the test's other goroutines sleep.
func TestSlowReceiverNotPreempted(t *testing.T) {
	a, b := pair(t)
	rcv, err := NewTCPReceiver(b, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	rerr := make(chan error, 1)
	go func() { rerr <- rcv.Run() }()
	msg := make([]byte, 100)
	if _, err := a.Write(msg); err != nil {
		t.Fatal(err)
	}
	<-rcv.FirstByte()

	urg := make(chan os.Signal, 1000)
	signal.Notify(urg, syscall.SIGURG)
	const writes = 30
	for range writes {
		time.Sleep(20 * time.Millisecond)
		if _, err := a.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	signal.Stop(urg)
	a.Close()
	if err := <-rerr; err != nil {
		t.Fatalf("receive: %v", err)
	}
	if got, want := rcv.Counters().Bytes, int64((writes+1)*len(msg)); got != want {
		t.Errorf("received %d bytes, sent %d", got, want)
	}
	// A receive call per message: each write came alone, 20 ms apart.
	if c := rcv.Counters().Calls; c < writes/2 || c > writes+1 {
		t.Errorf("%d receive calls for %d messages", c, writes+1)
	}
	t.Logf("%d SIGURG in %d waits of 20 ms", len(urg), writes)
	if n := len(urg); n > writes/3 {
		t.Errorf("%d preemption signals (SIGURG) in %d waits of 20 ms: the receiver waits in a raw system call", n, writes)
	}
}
