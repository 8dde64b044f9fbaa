package engine

import "wirespeed/internal/spec"

// What the loops allocate for the options a peer may ask for, in one
// place: the loops size their buffers with these functions, and a server
// budgets a test with them (server/memory.go), so that the two cannot
// drift apart (GRO receive buffers and sendfile's memfds once were
// allocated and not counted). Tests measure the allocations against them
// (server/TestDataPathMemoryCounted).

// groBuffer is the receive buffer of a GRO receiver: the kernel joins up
// to 64 KiB of datagrams.
const groBuffer = 1 << 16

// udpReceiveSize is the buffer a UDP receiver of datagrams of size bytes
// gives each datagram of its batch: the datagram, or 64 KiB with GRO.
func udpReceiveSize(size int, gro bool) int {
	size = max(size, udpHeaderLen)
	if gro {
		size = max(size, groBuffer)
	}
	return size
}

// UDPReceiveMemory is what a UDP_STREAM receiver of datagrams of size
// bytes taking batch datagrams per call allocates: a buffer for each
// datagram of the batch (64 KiB each with GRO) and its control buffer,
// and the ring of sequence numbers seen (128 KiB).
func UDPReceiveMemory(size, batch int, gro bool) int64 {
	return int64(max(batch, 1))*int64(udpReceiveSize(size, gro)+rxControlBytes) + seqWindow/8
}

// rxControlBytes bounds a datagram's control buffer (rxControlSpace):
// a timestamp and a GRO segment size.
const rxControlBytes = 64

// UDPSendMemory is what a UDP_STREAM sender of size-byte sends
// allocates: a batch of udpBatch datagram buffers.
func UDPSendMemory(size int) int64 { return udpBatch * int64(size) }

// PayloadMemory is the length of a payload of the spec's kind for
// messages of up to size bytes (NewPayload): its ring (random bytes, 64
// or 68 KiB; a hot ring of up to three messages; one message of zeros; the file, of
// fileLen bytes) and one message more for reads that wrap. A sendfile
// sender copies it into a memfd of its own (SendfileMemory).
func PayloadMemory(kind string, fileLen, size int) int64 {
	ring := fileLen
	switch kind {
	case spec.PayloadRandom:
		ring = ringFor(size)
	case spec.PayloadHot:
		ring = hotRingFor(size)
	case spec.PayloadZeros:
		ring = size
	}
	return int64(ring) + int64(size)
}

// SendfileMemory is what a TCP sender with --zerocopy sendfile holds
// besides the shared payload: a memfd with the whole payload, one per
// stream (shared memory, charged to the process's memory cgroup).
func SendfileMemory(kind string, fileLen, size int) int64 {
	return PayloadMemory(kind, fileLen, size)
}

// splicePipeSize is the pipe capacity asked for: a large pipe lets one
// splice take a whole receive size. The kernel caps it at
// fs.pipe-max-size (1 MiB by default) for an unprivileged process; a
// smaller pipe only makes the calls smaller.
const splicePipeSize = 1 << 20

// SpliceMemory is what a TCP receiver with --rx splice holds besides its
// receive buffer: its pipe, of up to splicePipeSize bytes of kernel
// buffers.
const SpliceMemory = splicePipeSize
