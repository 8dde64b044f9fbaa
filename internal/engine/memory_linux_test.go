//go:build !wirespeed_portable

package engine

import (
	"testing"

	"golang.org/x/sys/unix"

	"wirespeed/internal/spec"
)

// TestMemoryFiguresAreTheAllocations: the figures a server budgets with
// (memory.go) are the sizes the loops allocate: the payload's buffer,
// sendfile's memfd, a UDP receiver's batch (GRO's 64 KiB buffers
// included) and its control buffers.
func TestMemoryFiguresAreTheAllocations(t *testing.T) {
	file := make([]byte, 5000)
	for _, kind := range []string{spec.PayloadRandom, spec.PayloadZeros, spec.PayloadFile} {
		for _, size := range []int{1, 1472, 128 << 10, 8 << 20} {
			p, err := NewPayload(kind, file, size)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := int64(len(p.buf)), PayloadMemory(kind, len(file), size); got != want {
				t.Errorf("%s payload of %d-byte messages: %d bytes, PayloadMemory says %d", kind, size, got, want)
			}
			fd, err := payloadMemfd(p)
			if err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			err = unix.Fstat(fd, &st)
			unix.Close(fd)
			if err != nil {
				t.Fatal(err)
			}
			if want := SendfileMemory(kind, len(file), size); st.Size != want {
				t.Errorf("%s payload of %d-byte messages: a memfd of %d bytes, SendfileMemory says %d", kind, size, st.Size, want)
			}
		}
	}
	if rxControlSpace > rxControlBytes {
		t.Errorf("a datagram's control buffer is %d bytes, rxControlBytes %d", rxControlSpace, rxControlBytes)
	}
	for _, tc := range []struct {
		size, batch int
		gro         bool
	}{{16, 64, true}, {1472, 1, false}, {16, 1, false}, {9000, 8, true}, {65507, 64, false}} {
		size := max(tc.size, udpHeaderLen)
		if tc.gro {
			size = max(size, groBuffer)
		}
		b := newMmsgBatch(tc.batch, udpReceiveSize(tc.size, tc.gro))
		b.withControl(rxControlSpace)
		got := int64(8 * len(newSeqTracker().seen))
		for i := range b.bufs {
			got += int64(cap(b.bufs[i]) + cap(b.ctrl[i]))
		}
		if want := UDPReceiveMemory(tc.size, tc.batch, tc.gro); got > want || int64(tc.batch*size) > want-seqWindow/8 {
			t.Errorf("UDP receive of %d bytes, batch %d, GRO %v: %d bytes allocated, UDPReceiveMemory says %d", tc.size, tc.batch, tc.gro, got, want)
		}
	}
}
