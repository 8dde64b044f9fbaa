//go:build unix

package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// memfdPeak samples the sizes of this process's payload memfds (what
// --zerocopy sendfile makes: shared memory, outside the Go heap) every
// 10 ms until stop, which returns the highest total seen.
func memfdPeak() (stop func() int64) {
	var peak atomic.Int64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			// The loops' threads have file tables of their own: look in
			// every thread's, counting each memfd once.
			var n int64
			seen := map[uint64]bool{}
			fds, _ := filepath.Glob("/proc/self/task/*/fd/*")
			for _, fd := range fds {
				if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "/memfd:wirespeed-payload") {
					var st unix.Stat_t
					if unix.Stat(fd, &st) == nil && !seen[st.Ino] {
						seen[st.Ino] = true
						n += st.Size
					}
				}
			}
			if n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestDataPathMemoryCounted: what a data path option makes the server
// allocate is in the test's budget. Each case runs once under a large
// budget, measuring the Go heap and the payload memfds; then a server
// whose --max-test-memory is half of what was measured must refuse it
// (half: the heap's figure holds garbage not yet collected, and the
// client's own allocations; the exact figures are checked against the
// allocations in engine/TestMemoryFiguresAreTheAllocations). Before (issue 32), UDP_STREAM -m 16 --gro --recv-batch 64
// -P 32 was counted as 32 KiB while its receivers took 64 buffers of 64
// KiB each, and TCP_MAERTS -P 32 -m 32M --zerocopy sendfile as 32.25 MiB
// while its memfds took 1.03 GiB.
func TestDataPathMemoryCounted(t *testing.T) {
	gro := shortSpec(spec.UDPStream, 16)
	gro.SendSize, gro.RecvSize, gro.GRO, gro.RecvBatch, gro.Duration = 16, 16, true, 64, time.Second
	sendfile := shortSpec(spec.TCPMaerts, 4)
	sendfile.SendSize, sendfile.ZeroCopy, sendfile.Duration = 8<<20, spec.ZeroCopySendfile, time.Second
	for _, tc := range []struct {
		name string
		sp   spec.Test
	}{
		{"gro", gro},
		{"sendfile", sendfile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			big := startServer(t, server.Config{Admission: server.Admission{MaxTestMemory: 1 << 30, MaxMemory: 1 << 30}})
			c := mustDial(t, client.Config{Addr: big.addr})
			heap, memfd := heapPeak(), memfdPeak()
			_, err := c.Run(context.Background(), tc.sp)
			h, m := heap(), memfd()
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			used := h + m
			t.Logf("heap grew by %d KiB, memfds %d KiB at most", h>>10, m>>10)
			if used < 4<<20 {
				t.Fatalf("measured %d KiB in all: too little to tell a budget from noise", used>>10)
			}
			small := startServer(t, server.Config{Admission: server.Admission{MaxTestMemory: used / 2, MaxMemory: 1 << 30}})
			c2 := mustDial(t, client.Config{Addr: small.addr})
			defer c2.Close()
			_, err = c2.Run(context.Background(), tc.sp)
			if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-test-memory") {
				t.Errorf("under a budget of half the %d KiB measured: got %v, want a refusal naming --max-test-memory", used>>10, err)
			}
		})
	}
}
