//go:build !wirespeed_portable

package engine

import (
	"encoding/binary"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkUDPReceiveQueued is the receiver's own cost per datagram, with
// no sender running and no wake-ups: b.N datagrams of 64 bytes (and the
// end of stream) are queued in a socket buffer large enough for all of
// them before the loop starts, and the loop drains them. "loop" is
// UDPReceiver's loop as it runs, with the kernel's receive timestamps;
// "recvfrom" is netserver's loop (recvfrom(2) per datagram, nothing read
// from the datagram), the floor the loop is measured against; "recvmsg
// stamped" is that floor with the receive timestamps on and a control
// buffer: the kernel's cost of the stamp; "recvmsg" is without the stamp,
// "recvmmsg stamped" a recvmmsg(2) of one, as the loop made before. Run with a fixed count, e.g.
//
//	go test -run '^$' -bench UDPReceiveQueued -benchtime 200000x ./internal/engine/
func BenchmarkUDPReceiveQueued(b *testing.B) {
	for _, tc := range []struct {
		name  string
		batch int
		raw   func(fd int, n int)
		stamp bool
	}{
		{"loop", 1, nil, true},
		{"loop clocked", 1, nil, false},
		{"loop batch 64", 64, nil, true},
		{"recvfrom", 1, rawRecvfrom, false},
		{"recvfrom clocked", 1, rawRecvfromClocked, false},
		{"recvmsg", 1, rawRecvmsg, false},
		{"recvmsg stamped", 1, rawRecvmsg, true},
		{"recvmmsg stamped", 1, rawRecvmmsg, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sc, rc := udpPair(b)
			// Room for every datagram: some 1 KiB of buffer each.
			if err := withFD(rc, func(fd int) error {
				return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, min(b.N*1200+1<<20, 1<<30))
			}); err != nil {
				b.Skip("SO_RCVBUFFORCE:", err)
			}
			rcv, err := NewUDPReceiver(rc, 64)
			if err != nil {
				b.Fatal(err)
			}
			if !tc.stamp {
				if err := rcv.SetKernelStamps(false); err != nil {
					b.Fatal(err)
				}
			}
			if err := rcv.SetRecvBatch(tc.batch); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 64)
			for i := range b.N {
				formatWirespeed.stamp(buf, uint64(i), uint64(time.Since(rcv.epoch)))
				if _, err := sc.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			fin := make([]byte, 64)
			binary.BigEndian.PutUint64(fin[:8], finSeq)
			binary.BigEndian.PutUint64(fin[8:], uint64(b.N))
			if _, err := sc.Write(fin); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			// The process's CPU time per datagram beside the wall clock's:
			// on a machine shared with other work it moves far less.
			var ru0, ru1 unix.Rusage
			unix.Getrusage(unix.RUSAGE_SELF, &ru0)
			defer func() {
				unix.Getrusage(unix.RUSAGE_SELF, &ru1)
				cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}()
			if tc.raw != nil {
				withFD(rc, func(fd int) error { tc.raw(fd, b.N+1); return nil })
				return
			}
			if err := rcv.Run(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if got := rcv.Counters().Packets; got != int64(b.N) {
				b.Fatalf("received %d datagrams of %d", got, b.N)
			}
		})
	}
}

// rawRecvfrom receives n datagrams on fd, one recvfrom(2) each, as
// netserver's recv_data does.
func rawRecvfrom(fd int, n int) {
	buf := make([]byte, 64)
	var from unix.RawSockaddrAny
	for range n {
		fromLen := uint32(unix.SizeofSockaddrAny)
		unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0,
			uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&fromLen)))
	}
}

// rawRecvfromClocked is rawRecvfrom with a clock read after each
// datagram, as iperf3's receiver times its arrivals.
func rawRecvfromClocked(fd int, n int) {
	buf := make([]byte, 64)
	var from unix.RawSockaddrAny
	var last int64
	for range n {
		fromLen := uint32(unix.SizeofSockaddrAny)
		unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0,
			uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&fromLen)))
		last = time.Now().UnixNano()
	}
	_ = last
}

// rawRecvmsg receives n datagrams on fd, one recvmsg(2) each with a
// control buffer for the receive timestamp.
func rawRecvmsg(fd int, n int) {
	bt := newMmsgBatch(1, 64)
	bt.withControl(rxControlSpace)
	for range n {
		bt.recvmsgWait(uintptr(fd))
	}
}

// rawRecvmmsg receives n datagrams on fd, one recvmmsg(2) of one each
// with a control buffer, as the loop did before it used recvmsg.
func rawRecvmmsg(fd int, n int) {
	bt := newMmsgBatch(1, 64)
	bt.withControl(rxControlSpace)
	for range n {
		bt.recvmmsgWait(uintptr(fd))
	}
}
