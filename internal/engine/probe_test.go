package engine

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// TestUDPEchoerBoundsRate: a hostile client sends 2000 valid probes as
// fast as it can; the echoer answers no more than its rate allows over
// the time (plus its burst), counted by the client's socket, and drops
// what is not a probe.
func TestUDPEchoerBoundsRate(t *testing.T) {
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl, err := net.DialUDP("udp4", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.SetReadBuffer(4 << 20)
	// The server's socket answers the client's address alone, as the
	// server's connected probe socket does.
	if err := ConnectUDP(srv, cl.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	const rate = 50.0
	e := NewUDPEchoer(srv, rate)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { e.Run(ctx); close(done) }()
	buf := make([]byte, probeSize)
	copy(buf, probeMagic[:])
	for i := range 2000 {
		binary.BigEndian.PutUint32(buf[4:], uint32(i))
		cl.Write(buf)
		if i%100 == 0 {
			cl.Write([]byte("not a probe"))
		}
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-done
	elapsed := time.Since(start).Seconds()
	got := 0
	cl.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		if _, err := cl.Read(buf); err != nil {
			break
		}
		got++
	}
	bound := rate*elapsed + max(echoBurst, rate/2)
	if float64(got) > bound || got == 0 {
		t.Errorf("client got %d echoes in %.2f s; the echoer's rate of %g/s allows %.0f", got, elapsed, rate, bound)
	}
	// The socket's buffer may drop some of the flood before the echoer
	// reads it; what it read and did not echo it dropped.
	if int64(got) != e.Echoed() || e.Dropped() < 20 || e.Echoed()+e.Dropped() > 2020 {
		t.Errorf("echoed %d (client counted %d), dropped %d", e.Echoed(), got, e.Dropped())
	}
}
