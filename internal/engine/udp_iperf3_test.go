package engine

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"wirespeed/internal/spec"
)

func TestIperf3HeaderRoundTrip(t *testing.T) {
	for _, wide := range []bool{false, true} {
		var f udpFormat
		Iperf3Header(wide)(&f)
		b := make([]byte, 64)
		now := uint64(12*time.Second + 345678*time.Microsecond + 999) // sub-microsecond part is dropped
		f.stamp(b, 41, now)
		if sec, usec := binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8]); sec != 12 || usec != 345678 {
			t.Errorf("wide=%v: header time %d s %d us, want 12 s 345678 us", wide, sec, usec)
		}
		seqOnWire := uint64(binary.BigEndian.Uint32(b[8:12]))
		if wide {
			seqOnWire = binary.BigEndian.Uint64(b[8:16])
		}
		if seqOnWire != 42 {
			t.Errorf("wide=%v: sequence on the wire %d, want 42 (iperf3 numbers from 1)", wide, seqOnWire)
		}
		seq, sent, ok := f.parseIperf3(b)
		if !ok || seq != 41 || sent != int64(now-999) {
			t.Errorf("wide=%v: parse = %d, %d, %v; want 41, %d, true", wide, seq, sent, ok, now-999)
		}
		if _, _, ok := f.parseIperf3([]byte("9876")); ok {
			t.Errorf("wide=%v: the 4-byte stream hello parsed as a datagram", wide)
		}
		binary.BigEndian.PutUint32(b[8:12], 0)
		binary.BigEndian.PutUint64(b[8:16], 0)
		if _, _, ok := f.parseIperf3(b); ok {
			t.Errorf("wide=%v: sequence number 0 parsed", wide)
		}
	}
}

// TestIperf3UDPLoops runs the UDP loops with iperf3's header against each
// other: every datagram sent is counted received or lost, exactly (an
// off-by-one from iperf3's numbering starting at 1 makes one too many),
// and no end-of-stream datagram. A receiver starved on a loaded machine
// may really lose some; without loss every count matches.
func TestIperf3UDPLoops(t *testing.T) {
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.DialUDP("udp", nil, a.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	rc, err := net.DialUDP("udp", a.LocalAddr().(*net.UDPAddr), b.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Skipf("rebind: %v", err)
	}
	p, _ := NewPayload(spec.PayloadRandom, nil, 1200)
	snd, err := NewUDPSender(b, p, 1200, 100e6, Iperf3Header(false))
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := NewUDPReceiver(rc, 1200, Iperf3Header(false))
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	defer rcv.Close()
	rdone := make(chan error, 1)
	go func() { rdone <- rcv.Run() }()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Run() }()
	time.Sleep(200 * time.Millisecond)
	snd.Stop()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	snd.Finish()
	time.Sleep(50 * time.Millisecond)
	rcv.Stop()
	if err := <-rdone; err != nil {
		t.Fatal(err)
	}
	s, r := snd.Counters(), rcv.Counters()
	if rcv.Ended() {
		t.Error("receiver saw an end of stream; iperf3's format has none")
	}
	if r.Packets+r.Lost != s.Packets || r.Bytes != 1200*r.Packets || r.Lost < 0 {
		t.Errorf("sent %d datagrams (%d bytes), received %d (%d bytes) with %d lost: received and lost should add up to sent", s.Packets, s.Bytes, r.Packets, r.Bytes, r.Lost)
	}
	if r.Lost > 0 {
		t.Logf("%d of %d datagrams lost on loopback (a starved receiver)", r.Lost, s.Packets)
	}
}

// TestIperf3HeaderNoAllocation checks that the per-datagram work the
// iperf3 header adds to the hot loops allocates nothing.
func TestIperf3HeaderNoAllocation(t *testing.T) {
	var f udpFormat
	Iperf3Header(true)(&f)
	r := &UDPReceiver{hdr: f, tr: newSeqTracker()}
	b := make([]byte, 1472)
	var seq uint64
	allocs := testing.AllocsPerRun(10000, func() {
		f.stamp(b, seq, seq*1000)
		r.handle(b, int64(seq*1000+50), true)
		seq++
	})
	if allocs != 0 {
		t.Errorf("%g allocations per datagram", allocs)
	}
	if r.tr.lost != 0 || r.tr.unique != int64(seq) {
		t.Errorf("counted %d with %d lost of %d in-order datagrams", r.tr.unique, r.tr.lost, seq)
	}
}
