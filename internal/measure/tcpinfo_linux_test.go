package measure

import (
	"io"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/testkit"
)

// TestTCPInfoLimitedTimes makes a sender that is held by the receiver's
// window (tcp_info's rwnd_limited) and not by its own send buffer, then
// lets the connection go idle so that the kernel's timers stop, and
// compares what ReadTCPInfo returns with TCP_INFO read by the test
// itself: the times must be the kernel's, each in its own field.
func TestTCPInfoLimitedTimes(t *testing.T) {
	snd, rcv := testkit.TCPPair(t)
	if err := rcv.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	if err := snd.SetWriteBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	// 1 MiB fits in the send buffer at once: the write returns
	// without waiting for room, and the data waits for the window of a
	// receiver that does not read.
	const n = 1 << 20
	if _, err := snd.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := io.ReadFull(rcv, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the last ACKs; then nothing is in flight

	rc, err := snd.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var kernel *unix.TCPInfo
	var kerr error
	if err := rc.Control(func(fd uintptr) {
		kernel, kerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || kerr != nil {
		t.Fatalf("TCP_INFO: %v %v", err, kerr)
	}
	got, err := ReadTCPInfo(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel: busy %d us, rwnd limited %d us, sndbuf limited %d us; ReadTCPInfo: %d, %d, %d",
		kernel.Busy_time, kernel.Rwnd_limited, kernel.Sndbuf_limited, got.BusyTimeMicros, got.RwndLimitedMicros, got.SndbufLimitedMicros)
	if kernel.Rwnd_limited < 200_000 || kernel.Rwnd_limited <= kernel.Sndbuf_limited {
		t.Fatalf("the kernel counts %d us limited by the receive window and %d by the send buffer: the sender was held by the window for 300 ms, so this test cannot tell them apart",
			kernel.Rwnd_limited, kernel.Sndbuf_limited)
	}
	if got.BusyTimeMicros != int64(kernel.Busy_time) || got.RwndLimitedMicros != int64(kernel.Rwnd_limited) || got.SndbufLimitedMicros != int64(kernel.Sndbuf_limited) {
		t.Errorf("ReadTCPInfo: busy %d, rwnd limited %d, sndbuf limited %d us; the kernel: %d, %d, %d",
			got.BusyTimeMicros, got.RwndLimitedMicros, got.SndbufLimitedMicros, kernel.Busy_time, kernel.Rwnd_limited, kernel.Sndbuf_limited)
	}
	if got.BytesAcked != int64(kernel.Bytes_acked) || got.BytesAcked < n {
		t.Errorf("bytes acked %d; the kernel %d, and %d were written and read", got.BytesAcked, kernel.Bytes_acked, n)
	}
}
