package engine

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/spec"
)

// TestClientServerOptions builds the data sockets' options of a test
// whose every socket flag is set, and checks each against the flags by
// hand: stream i of --cport 5000 on port 4999+i, the client's buffer on
// the client's sockets and the server's on the server's, and a UDP
// receiver with no buffer asked for gets UDPReceiveBuffer, whichever
// side receives.
func TestClientServerOptions(t *testing.T) {
	base := spec.Default()
	base.BindAddr, base.BindDev, base.ClientPort = "10.77.0.2", "wst-b", 5000
	base.TOS, base.MSS, base.CongestionControl, base.NoDelay = 0xb8, 1000, "reno", true
	base.LocalSockBuf, base.RemoteSockBuf = 1<<20, 2<<20
	addr := netip.MustParseAddr("10.77.0.2")
	tcp := base
	tcp.Kind = spec.TCPStream
	udp := base
	udp.Kind, udp.MSS, udp.CongestionControl, udp.NoDelay, udp.DontFragment = spec.UDPStream, 0, "", false, true
	udpNoBuf := udp
	udpNoBuf.LocalSockBuf, udpNoBuf.RemoteSockBuf = 0, 0
	crr := tcp
	crr.Kind, crr.ClientPort = spec.TCPCRR, 0
	up := spec.Stream{ID: 3, Dir: spec.ClientToServer}
	down := spec.Stream{ID: 3, Dir: spec.ServerToClient}
	tests := []struct {
		name         string
		t            spec.Test
		st           spec.Stream
		client, serv Options
	}{
		{name: "TCP", t: tcp, st: up,
			client: Options{SockBuf: 1 << 20, CongestionControl: "reno", NoDelay: true, LocalAddr: addr, LocalPort: 5002, BindDev: "wst-b", TOS: 0xb8, MSS: 1000},
			serv:   Options{SockBuf: 2 << 20, CongestionControl: "reno", NoDelay: true, TOS: 0xb8, MSS: 1000}},
		{name: "TCP_CRR", t: crr, st: up,
			client: Options{SockBuf: 1 << 20, CongestionControl: "reno", NoDelay: true, LocalAddr: addr, BindDev: "wst-b", TOS: 0xb8, MSS: 1000},
			serv:   Options{SockBuf: 2 << 20, CongestionControl: "reno", NoDelay: true, TOS: 0xb8, MSS: 1000}},
		{name: "UDP", t: udp, st: up,
			client: Options{SockBuf: 1 << 20, LocalAddr: addr, LocalPort: 5002, BindDev: "wst-b", TOS: 0xb8, DontFragment: true},
			serv:   Options{SockBuf: 2 << 20, TOS: 0xb8, DontFragment: true}},
		{name: "UDP to the server, no buffer asked", t: udpNoBuf, st: up,
			client: Options{LocalAddr: addr, LocalPort: 5002, BindDev: "wst-b", TOS: 0xb8, DontFragment: true},
			serv:   Options{SockBuf: UDPReceiveBuffer, TOS: 0xb8, DontFragment: true}},
		{name: "UDP to the client, no buffer asked", t: udpNoBuf, st: down,
			client: Options{SockBuf: UDPReceiveBuffer, LocalAddr: addr, LocalPort: 5002, BindDev: "wst-b", TOS: 0xb8, DontFragment: true},
			serv:   Options{TOS: 0xb8, DontFragment: true}},
	}
	cmpAddr := cmp.Comparer(func(a, b netip.Addr) bool { return a == b })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.client, ClientOptions(tt.t, tt.st), cmpAddr); d != "" {
				t.Errorf("ClientOptions (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.serv, ServerOptions(tt.t, tt.st), cmpAddr); d != "" {
				t.Errorf("ServerOptions (-want +got):\n%s", d)
			}
		})
	}
}

// TestCapToLimit checks a UDP sender's sends against its datagram limit
// by hand: with GSO sends of 4 datagrams and a limit of 10, after 8 sent
// one more send is due (its last 2 datagrams past the limit, as
// SetLimit says), and after 12 none.
func TestCapToLimit(t *testing.T) {
	s := &UDPSender{}
	if n, done := s.capToLimit(5, 100, 4); n != 5 || done {
		t.Errorf("no limit: %d sends, done %v; want 5, false", n, done)
	}
	s.SetLimit(10)
	tests := []struct {
		n          int
		seq, per   uint64
		want       int
		wantFinish bool
	}{
		{n: 8, seq: 0, per: 1, want: 8},
		{n: 8, seq: 5, per: 1, want: 5},
		{n: 8, seq: 9, per: 1, want: 1},
		{n: 8, seq: 10, per: 1, wantFinish: true},
		{n: 8, seq: 0, per: 4, want: 3}, // 10 datagrams take 3 sends of 4
		{n: 8, seq: 8, per: 4, want: 1},
		{n: 8, seq: 12, per: 4, wantFinish: true},
	}
	for _, tt := range tests {
		n, done := s.capToLimit(tt.n, tt.seq, tt.per)
		if n != tt.want || done != tt.wantFinish {
			t.Errorf("capToLimit(%d, seq %d, %d a send) = %d, %v; want %d, %v", tt.n, tt.seq, tt.per, n, done, tt.want, tt.wantFinish)
		}
	}
}
