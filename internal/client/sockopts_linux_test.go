package client_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/client"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// The socket options of issue 19 end to end on loopback, seen from
// outside the program: the addresses and ports the server's kernel says
// its connections come from, and the TOS bytes on packets read off lo.
// Every address of 127/8 is the host's, so 127.0.0.x stands for a second
// address of a multi-homed host.

// peerLog is a listener that records the remote address of every
// connection the server accepts on it: what the server's kernel says the
// peer is.
type peerLog struct {
	net.Listener
	mu    sync.Mutex
	peers []netip.AddrPort
}

func (l *peerLog) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.peers = append(l.peers, c.RemoteAddr().(*net.TCPAddr).AddrPort())
		l.mu.Unlock()
	}
	return c, err
}

func (l *peerLog) seen() []netip.AddrPort {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]netip.AddrPort(nil), l.peers...)
}

// startLogged starts a server whose accepted connections are recorded.
func startLogged(t *testing.T) (string, *peerLog) {
	t.Helper()
	pl := &peerLog{}
	addr, _ := testkit.Serve(t, func(ctx context.Context, ln net.Listener) error {
		pl.Listener = ln
		return server.New(server.Config{Logger: slog.New(slog.DiscardHandler)}).Serve(ctx, pl)
	})
	return addr, pl
}

// requireLoopbackAlias skips unless a loopback address can be bound:
// Linux answers all of 127/8 on lo. The tests that read packets off lo
// use 127.0.19.x, which no other test uses: go test runs packages in
// parallel, and another package's traffic from the same address counted
// as this test's once (cli's mesh test listens on 127.0.0.4).
func requireLoopbackAlias(t *testing.T, a netip.Addr) {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
	if err != nil {
		t.Skipf("cannot bind %s on this host (Linux answers all of 127/8 on lo): %v", a, err)
	}
	ln.Close()
}

func sockSpec(kind spec.Kind) spec.Test {
	sp := shortSpec(kind, 1)
	sp.Duration, sp.Interval = 300*time.Millisecond, 0
	if kind == spec.UDPStream {
		sp.SendSize = spec.DefaultUDPSize
		sp.RateBitsPerSecond = 50e6
	}
	return sp
}

func TestBindAddress(t *testing.T) {
	bind := netip.MustParseAddr("127.0.0.2")
	requireLoopbackAlias(t, bind)
	addr, pl := startLogged(t)
	c := dial(t, client.Config{Addr: addr, BindAddr: bind})
	for _, tt := range []struct {
		kind     spec.Kind
		parallel int
	}{{spec.TCPStream, 2}, {spec.TCPBidir, 1}, {spec.UDPStream, 1}, {spec.UDPRR, 1}, {spec.TCPCRR, 1}} {
		t.Run(string(tt.kind), func(t *testing.T) {
			sp := sockSpec(tt.kind)
			sp.Parallel = tt.parallel
			sp.BindAddr = bind.String()
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			// The server takes UDP datagrams and TCP_CRR connections only
			// from the control connection's address, so a run that moved
			// data bound them too.
			if s := res.Summary; s.Bytes == 0 && (s.RRSummary == nil || s.Transactions == 0) {
				t.Errorf("nothing moved: %+v", s)
			}
		})
	}
	peers := pl.seen()
	// The control connection and the TCP streams' 2+2 data connections.
	if len(peers) < 5 {
		t.Fatalf("server accepted %d connections, want at least 5: %v", len(peers), peers)
	}
	for _, p := range peers {
		if p.Addr() != bind {
			t.Errorf("server saw a connection from %s, want every one from %s (-B)", p, bind)
		}
	}
	t.Logf("server's peers: %v", peers)
}

func TestBindAddressNotLocal(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	_, err := client.Dial(context.Background(), client.Config{Addr: addr, BindAddr: netip.MustParseAddr("192.0.2.1"), Tool: "test"})
	if err == nil || !strings.Contains(err.Error(), "192.0.2.1 an address of this host") {
		t.Fatalf("dial from 192.0.2.1: %v, want an error saying it is not this host's", err)
	}
}

func TestClientPort(t *testing.T) {
	addr, pl := startLogged(t)
	c := dial(t, client.Config{Addr: addr})
	base := testkit.FreePorts(t, 2)
	sp := sockSpec(spec.TCPStream)
	sp.Parallel, sp.ClientPort = 2, base
	// Twice in a row: the second run's ports were the first one's a
	// moment ago.
	for run := 1; run <= 2; run++ {
		if _, err := c.Run(context.Background(), sp); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	from := map[uint16]int{}
	for _, p := range pl.seen() {
		from[p.Port()]++
	}
	if from[uint16(base)] != 2 || from[uint16(base+1)] != 2 {
		t.Errorf("data connections from ports %v, want two each from %d and %d (--cport %d, -P 2, two runs)", from, base, base+1, base)
	}
}

func TestClientPortUDPOnTheWire(t *testing.T) {
	nstest.RequireRoot(t)
	bind := netip.MustParseAddr("127.0.19.5")
	requireLoopbackAlias(t, bind)
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr, BindAddr: bind})
	base := testkit.FreePorts(t, 2)
	sp := sockSpec(spec.UDPStream)
	sp.Parallel, sp.ClientPort, sp.BindAddr = 2, base, bind.String()
	pk := sniff(t, bind)
	if _, err := c.Run(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
	from := map[uint16]int{}
	for _, p := range pk() {
		if p.proto == unix.IPPROTO_UDP && p.src.Addr() == bind {
			from[p.src.Port()]++
		}
	}
	if len(from) != 2 || from[uint16(base)] == 0 || from[uint16(base+1)] == 0 {
		t.Errorf("UDP datagrams from ports %v, want from %d and %d only", from, base, base+1)
	}
}

// packet is what sniff read of one IPv4 packet.
type packet struct {
	src, dst netip.AddrPort
	proto    uint8
	tos      uint8
	syn      bool
}

// sniff reads the IPv4 packets to or from a on lo, as the kernel hands
// them to a packet socket, until the function it returns is called; that
// returns them. Only the incoming copy of each is kept.
func sniff(t *testing.T, a netip.Addr) func() []packet {
	t.Helper()
	nstest.RequireRoot(t)
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	// Protocol 0: nothing arrives until the bind below, after the filter
	// is in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("packet socket: %v", err)
	}
	ip := binary.BigEndian.Uint32(a.AsSlice())
	// Keep packets from or to a, drop the rest in the kernel: other
	// programs on this host use lo too.
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 12},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 2, Jf: 0, K: ip},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 16},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: ip},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffff},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog); err != nil {
		unix.Close(fd)
		t.Fatalf("attach filter: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: lo.Index}); err != nil {
		unix.Close(fd)
		t.Fatalf("bind packet socket to lo: %v", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var (
		mu   sync.Mutex
		got  []packet
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		buf := make([]byte, 128)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, from, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
			if err != nil {
				continue
			}
			ll, ok := from.(*unix.SockaddrLinklayer)
			if !ok || ll.Pkttype != unix.PACKET_HOST || n < 24 || n > len(buf) && len(buf) < 24 {
				continue
			}
			p, ok := parseIPv4(buf[:min(n, len(buf))])
			if ok {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	finish := func() []packet {
		once.Do(func() {
			close(stop)
			<-done
			unix.Close(fd)
		})
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	t.Cleanup(func() { finish() })
	return finish
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// parseIPv4 reads the header fields of an IPv4 packet carrying TCP or
// UDP.
func parseIPv4(b []byte) (packet, bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return packet{}, false
	}
	ihl := int(b[0]&0x0f) * 4
	p := packet{tos: b[1], proto: b[9]}
	if p.proto != unix.IPPROTO_TCP && p.proto != unix.IPPROTO_UDP || len(b) < ihl+4 {
		return packet{}, false
	}
	if off := binary.BigEndian.Uint16(b[6:8]) & 0x1fff; off != 0 {
		return packet{}, false // a later fragment: no ports
	}
	src := netip.AddrFrom4([4]byte(b[12:16]))
	dst := netip.AddrFrom4([4]byte(b[16:20]))
	p.src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(b[ihl:]))
	p.dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(b[ihl+2:]))
	if p.proto == unix.IPPROTO_TCP && len(b) >= ihl+14 {
		p.syn = b[ihl+13]&0x02 != 0
	}
	return p, true
}

// TestTOSOnTheWire runs tests with --dscp or --tos from 127.0.19.4 and
// reads the TOS byte of the data packets off lo: the client's packets
// carry it from the SYN on, the server's once it accepted the
// connection. The control connection, which is not measured, does not.
func TestTOSOnTheWire(t *testing.T) {
	bind := netip.MustParseAddr("127.0.19.4")
	requireLoopbackAlias(t, bind)
	addr, _ := startServer(t, server.Config{})
	mainPort := netip.MustParseAddrPort(addr).Port()
	c := dial(t, client.Config{Addr: addr, BindAddr: bind})
	ef, err := spec.ParseDSCP("EF")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		kind spec.Kind
		rev  bool
		tos  int
	}{
		{"TCP_STREAM dscp EF", spec.TCPStream, false, ef << 2},
		{"TCP_MAERTS tos 0x28", spec.TCPMaerts, false, 0x28},
		{"UDP_STREAM -R dscp EF", spec.UDPStream, true, ef << 2},
		{"UDP_STREAM tos 0x88", spec.UDPStream, false, 0x88},
		{"TCP_CRR dscp EF", spec.TCPCRR, false, ef << 2},
		{"TCP_STREAM none", spec.TCPStream, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := sockSpec(tt.kind)
			sp.Reverse, sp.TOS, sp.BindAddr = tt.rev, tt.tos, bind.String()
			if tt.kind != spec.TCPCRR {
				sp.ClientPort = testkit.FreePorts(t, 1)
			}
			pk := sniff(t, bind)
			if _, err := c.Run(context.Background(), sp); err != nil {
				t.Fatal(err)
			}
			// Data packets: UDP, TCP_CRR's own listener, or the client's
			// --cport; the rest is the control connection.
			type count struct{ all, marked int }
			var up, down count
			for _, p := range pk() {
				clientEnd, serverEnd := p.src, p.dst
				if p.dst.Addr() == bind {
					clientEnd, serverEnd = p.dst, p.src
				}
				data := p.proto == unix.IPPROTO_UDP || serverEnd.Port() != mainPort || int(clientEnd.Port()) == sp.ClientPort
				if !data {
					continue
				}
				cnt := &up
				if p.dst.Addr() == bind {
					cnt = &down
				}
				cnt.all++
				if int(p.tos&^3) == tt.tos { // the ECN bits are TCP's own
					cnt.marked++
				}
			}
			t.Logf("client to server %d of %d packets with TOS %#x, server to client %d of %d", up.marked, up.all, tt.tos, down.marked, down.all)
			// UDP_STREAM: the receiver sends only the data header or its
			// acknowledgement.
			if up.all < 1 || down.all < 1 || up.all+down.all < 20 {
				t.Fatalf("only %d and %d data packets seen", up.all, down.all)
			}
			if up.marked != up.all {
				t.Errorf("client's packets: %d of %d carry TOS %#x, want all", up.marked, up.all, tt.tos)
			}
			// The server's kernel answers a SYN, and may acknowledge the
			// first bytes, before the server sets the TOS on the accepted
			// connection; TCP_CRR's listener has it from the start.
			if down.marked < down.all*9/10 {
				t.Errorf("server's packets: %d of %d carry TOS %#x, want nearly all", down.marked, down.all, tt.tos)
			}
		})
	}
}

// TestMSSInTCPInfo runs with --mss 1000: both kernels report a sending
// MSS of at most 1000 bytes (less the TCP options) in TCP_INFO, where
// loopback's is otherwise near 65483.
func TestMSSInTCPInfo(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	for _, tt := range []struct {
		kind spec.Kind
		mss  int
	}{{spec.TCPStream, 1000}, {spec.TCPMaerts, 1000}, {spec.TCPStream, 0}} {
		t.Run(fmt.Sprintf("%s/mss=%d", tt.kind, tt.mss), func(t *testing.T) {
			sp := sockSpec(tt.kind)
			sp.MSS = tt.mss
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Streams {
				for _, s := range []result.StreamSide{st.Sender, st.Receiver} {
					if s.TCPInfo == nil {
						t.Fatalf("stream %d: no TCP_INFO", st.ID)
					}
					mss := s.TCPInfo.SndMSS
					t.Logf("stream %d %s %s: snd_mss %d", st.ID, s.Side, s.Role, mss)
					switch {
					case tt.mss > 0 && (mss > tt.mss || mss < tt.mss-40):
						t.Errorf("%s %s snd_mss %d, want at most %d (less up to 40 bytes of TCP options)", s.Side, s.Role, mss, tt.mss)
					case tt.mss == 0 && mss <= 1000:
						t.Errorf("%s %s snd_mss %d without --mss: loopback's should be far above 1000", s.Side, s.Role, mss)
					}
				}
			}
		})
	}
}
