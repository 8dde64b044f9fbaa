package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"syscall"
)

// iperf3's UDP datagrams start with a header of their own, different from
// wirespeed's: the send time as seconds and microseconds (big-endian
// uint32 each, on the sender's clock: only differences matter, for the
// jitter) and the sequence number, from 1, as a big-endian uint32, or a
// uint64 when the test asked for 64-bit counters. There is no
// end-of-stream datagram: the control connection's TEST_END ends a test.
//
// The loops keep their sequence numbers 0-based whatever the format: the
// iperf3 header carries seq+1, and a receiver gives back seq-1, so the
// loss and window accounting is the same for both formats.

// udpFormat is how a UDP loop frames its datagrams.
type udpFormat uint8

const (
	formatWirespeed  udpFormat = iota // seq u64 + send time u64 ns; end-of-stream datagrams
	formatIperf3                      // sec u32 + usec u32 + seq u32 (from 1)
	formatIperf3Wide                  // sec u32 + usec u32 + seq u64 (from 1)
)

// iperf3 header lengths.
const (
	iperf3HeaderLen     = 12
	iperf3WideHeaderLen = 16
)

// UDPOption changes how a UDP loop frames its datagrams; the default is
// wirespeed's own header.
type UDPOption func(*udpFormat)

// Iperf3Header makes a UDP loop use iperf3's datagram header, with 64-bit
// sequence numbers when counters64 (iperf3's udp_counters_64bit). Its
// sender sends no end-of-stream datagrams; its receiver runs until Stop.
func Iperf3Header(counters64 bool) UDPOption {
	return func(f *udpFormat) {
		*f = formatIperf3
		if counters64 {
			*f = formatIperf3Wide
		}
	}
}

func udpFormatOf(opts []UDPOption) udpFormat {
	var f udpFormat
	for _, o := range opts {
		if o != nil {
			o(&f)
		}
	}
	return f
}

// stamp writes the header of datagram seq (0-based) sent at now
// nanoseconds on this side's clock into b, which is at least 16 bytes.
func (f udpFormat) stamp(b []byte, seq, now uint64) {
	switch f {
	case formatWirespeed:
		binary.BigEndian.PutUint64(b[:8], seq)
		binary.BigEndian.PutUint64(b[8:16], now)
		return
	case formatIperf3Wide:
		binary.BigEndian.PutUint64(b[8:16], seq+1)
	default:
		binary.BigEndian.PutUint32(b[8:12], uint32(seq+1))
	}
	binary.BigEndian.PutUint32(b[0:4], uint32(now/1e9))
	binary.BigEndian.PutUint32(b[4:8], uint32(now%1e9/1e3))
}

// parseIperf3 reads an iperf3 header: the 0-based sequence number and the
// send time in nanoseconds on the sender's clock. ok is false for a
// datagram too short for the header or numbered 0, which iperf3 never
// sends (the 4-byte stream setup datagram is one such).
func (f udpFormat) parseIperf3(b []byte) (seq uint64, sent int64, ok bool) {
	switch {
	case f == formatIperf3Wide && len(b) >= iperf3WideHeaderLen:
		seq = binary.BigEndian.Uint64(b[8:16])
	case f == formatIperf3 && len(b) >= iperf3HeaderLen:
		seq = uint64(binary.BigEndian.Uint32(b[8:12]))
	default:
		return 0, 0, false
	}
	if seq == 0 || seq >= maxSeq {
		return 0, 0, false
	}
	sec := int64(binary.BigEndian.Uint32(b[0:4]))
	usec := int64(binary.BigEndian.Uint32(b[4:8]))
	return seq - 1, sec*1e9 + usec*1e3, true
}

// handleIperf3 is UDPReceiver.handle for iperf3's header: it counts the
// datagram and never sees an end of stream.
func (r *UDPReceiver) handleIperf3(b []byte, now int64, timed bool) bool {
	seq, sent, ok := r.hdr.parseIperf3(b)
	if !ok {
		return true
	}
	r.bytes += int64(len(b))
	if timed {
		r.tr.add(seq, now-sent)
	} else {
		r.tr.addUntimed(seq)
	}
	return true
}

// ListenUDPShared opens a UDP socket on addr with SO_REUSEADDR, so that
// several sockets can share one port: an iperf3 server receives every UDP
// stream's first datagram on its control port, connects the socket that
// got it to the sender and opens the next one on the same port. Only
// opts.SockBuf applies.
func ListenUDPShared(ctx context.Context, network, addr string, opts Options) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			if serr = setReuseAddr(fd); serr == nil {
				serr = setSockOpts(fd, Options{SockBuf: opts.SockBuf})
			}
		}); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		pc.Close()
		return nil, fmt.Errorf("listen %s %s: not a UDP socket", network, addr)
	}
	return uc, nil
}
