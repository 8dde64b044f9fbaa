package result

import (
	"math"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestJoinWire checks the derived figures against values worked out by
// hand. The client sends 10,000,000 bytes of TCP_STREAM over 2 s; its
// device sent 1000 packets of 10,000 payload bytes and 66 bytes of
// headers (Ethernet 14, IPv4 20, TCP 20 + 12 for timestamps) and 1 MB of
// other traffic, and received 500 ACKs of 66 bytes.
func TestJoinWire(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.TCPStream
	env := &sysinfo.Env{Peer: "10.0.0.2", Interface: &sysinfo.Interface{Name: "eth0", MTU: 1500}}
	local := SideResult{Side: Local, Env: env, Flows: []Flow{flow(spec.ClientToServer, Local, Sender, 2, map[int]int64{1: 10_000_000})},
		Wire: &netdev.Wire{Device: "eth0", ElapsedS: 2, Link: netdev.LinkCounters{
			TxPackets: 1000, TxBytes: 10_066_000 + 1_000_000, RxPackets: 500, RxBytes: 500 * 66}}}
	remote := SideResult{Side: Remote, Flows: []Flow{flow(spec.ClientToServer, Remote, Receiver, 2, map[int]int64{1: 10_000_000})},
		Wire: &netdev.Wire{Device: "eth1", ElapsedS: 2, Link: netdev.LinkCounters{
			TxPackets: 500, TxBytes: 500 * 66, RxPackets: 1000, RxBytes: 10_066_000, RxDropped: 3}}}
	res := Join(sp, local, remote)
	w := res.Local.Wire
	if w == nil || res.Remote.Wire == nil {
		t.Fatal("no wire figures")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"tx pps", w.TxPacketsPerSecond, 500},
		{"rx pps", w.RxPacketsPerSecond, 250},
		{"tx B/pkt", w.TxBytesPerPacket, 11_066},
		{"rx B/pkt", w.RxBytesPerPacket, 66},
		{"tx wire bps", w.TxBitsPerSecond, 8 * 11_066_000 / 2.0},
		{"tx goodput", w.TxGoodputBitsPerSecond, 8 * 10_000_000 / 2.0},
		{"rx goodput", w.RxGoodputBitsPerSecond, 0},
		{"other", w.OtherPct, 100 * 1_000_000 / float64(11_066_000+33_000)},
		{"receiver other", res.Remote.Wire.OtherPct, 0},
		{"receiver rx B/pkt", res.Remote.Wire.RxBytesPerPacket, 10_066},
		{"summary pps", res.Summary.SenderWirePacketsPerSecond, 500},
		{"summary B/pkt", res.Summary.SenderWireBytesPerPacket, 11_066},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if w.HeaderBytes != 66 {
		t.Errorf("headers %d bytes, want 66", w.HeaderBytes)
	}
	if !hasWarning(Texts(res.Warnings), "remote side: its device eth1 dropped 3 received packets") {
		t.Errorf("no receive-drop warning in %q", Texts(res.Warnings))
	}
	if hasWarning(Texts(res.Warnings), "not this test's") {
		t.Errorf("an other-traffic warning at 9%%: %q", Texts(res.Warnings))
	}

	// MAERTS: the sender's device is the server's.
	sp.Kind = spec.TCPMaerts
	local.Flows = []Flow{flow(spec.ServerToClient, Local, Receiver, 2, map[int]int64{1: 1})}
	remote.Flows = []Flow{flow(spec.ServerToClient, Remote, Sender, 2, map[int]int64{1: 1})}
	if got := Join(sp, local, remote).Summary.SenderWirePacketsPerSecond; got != 250 {
		t.Errorf("TCP_MAERTS sender's device %v pkts/s, want the server's 250", got)
	}

	// UDP_STREAM -R: the server sends, its device's figures are the
	// summary's. Its device sent 2000 datagrams of 1472 bytes in 2 s,
	// each 1472 + 42 (Ethernet 14, IPv4 20, UDP 8) = 1514 bytes: 1000
	// packets a second of 1514 bytes; the client's device, which
	// received them, sent 10 packets of 90 bytes. The TCP cases above
	// did not tell: UDP_STREAM -R is not TCP_MAERTS.
	sp.Kind, sp.Reverse = spec.UDPStream, true
	local.Flows = []Flow{flow(spec.ServerToClient, Local, Receiver, 2, map[int]int64{1: 2000 * 1472})}
	remote.Flows = []Flow{flow(spec.ServerToClient, Remote, Sender, 2, map[int]int64{1: 2000 * 1472})}
	local.Wire = &netdev.Wire{Device: "eth0", ElapsedS: 2, Link: netdev.LinkCounters{TxPackets: 10, TxBytes: 900, RxPackets: 2000, RxBytes: 2000 * 1514}}
	remote.Wire = &netdev.Wire{Device: "eth1", ElapsedS: 2, Link: netdev.LinkCounters{TxPackets: 2000, TxBytes: 2000 * 1514, RxPackets: 10, RxBytes: 900}}
	if s := Join(sp, local, remote).Summary; s.SenderWirePacketsPerSecond != 1000 || s.SenderWireBytesPerPacket != 1514 {
		t.Errorf("UDP_STREAM -R sender's device %v pkts/s of %v bytes, want the server's 1000 of 1514", s.SenderWirePacketsPerSecond, s.SenderWireBytesPerPacket)
	}
}

// TestJoinWireLoopback: on lo every packet leaves and enters once; the
// test's bytes are both ways' payload and one set of headers per packet.
// 4 MB of payload in 100 packets of 40,066 bytes and 100 ACKs, and
// 8,000,000 bytes of other traffic: 8e6 / (100*40066 + 100*66 + 8e6),
// 66.6%; each side counts the same device, and neither warns.
func TestJoinWireLoopback(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.TCPStream
	tx := uint64(100*40_066 + 100*66 + 8_000_000)
	lo := &netdev.Wire{Device: "lo", Loopback: true, ElapsedS: 1, Link: netdev.LinkCounters{TxPackets: 200, TxBytes: tx, RxPackets: 200, RxBytes: tx}}
	local := SideResult{Side: Local, Flows: []Flow{flow(spec.ClientToServer, Local, Sender, 1, map[int]int64{1: 4_000_000})}, Wire: lo}
	remote := SideResult{Side: Remote, Flows: []Flow{flow(spec.ClientToServer, Remote, Receiver, 1, map[int]int64{1: 4_000_000})}, Wire: lo}
	res := Join(sp, local, remote)
	want := 100 * 8_000_000 / float64(tx)
	for _, w := range []*Wire{res.Local.Wire, res.Remote.Wire} {
		if !near(w.OtherPct, want) {
			t.Errorf("%s other %v%%, want %v%%", w.Device, w.OtherPct, want)
		}
	}
	// lo carries the host's talk to itself: no warning, the share is
	// in the figures.
	if len(Texts(res.Warnings)) != 0 {
		t.Errorf("warnings on loopback: %q", Texts(res.Warnings))
	}
	// The same device, not a loopback one: other traffic above 50%.
	lo.Loopback = false
	lo.Link.RxBytes, lo.Link.RxPackets = 0, 0
	if res := Join(sp, local, remote); !hasWarning(Texts(res.Warnings), "not this test's traffic") {
		t.Errorf("no other-traffic warning at %.0f%%: %q", res.Local.Wire.OtherPct, Texts(res.Warnings))
	}
}

// TestFragmentWarning: 4000-byte datagrams over a 1500-byte MTU leave as
// three packets each; 1472-byte ones as one.
func TestFragmentWarning(t *testing.T) {
	for _, c := range []struct {
		size    int
		packets uint64
		want    bool
	}{{4000, 3000, true}, {1472, 1000, false}} {
		sp := spec.Default()
		sp.Kind = spec.UDPStream
		sp.SendSize = c.size
		env := &sysinfo.Env{Peer: "10.0.0.2", Interface: &sysinfo.Interface{Name: "eth0", MTU: 1500}}
		snd := flow(spec.ClientToServer, Local, Sender, 1, map[int]int64{1: int64(1000 * c.size)})
		snd.Streams[0].Packets = 1000
		local := SideResult{Side: Local, Env: env, Flows: []Flow{snd},
			Wire: &netdev.Wire{Device: "eth0", ElapsedS: 1, Link: netdev.LinkCounters{TxPackets: c.packets, TxBytes: c.packets * 1500}}}
		remote := SideResult{Side: Remote, Flows: []Flow{flow(spec.ClientToServer, Remote, Receiver, 1, map[int]int64{1: int64(1000 * c.size)})}}
		res := Join(sp, local, remote)
		if got := hasWarning(Texts(res.Warnings), "larger than the path MTU"); got != c.want {
			t.Errorf("%d bytes: fragmentation warning %v, want %v: %q", c.size, got, c.want, Texts(res.Warnings))
		}
		if c.want && !hasWarning(Texts(res.Warnings), "3.00 packets per datagram") {
			t.Errorf("%d bytes: warning does not say 3 packets per datagram: %q", c.size, Texts(res.Warnings))
		}
	}
}

func hasWarning(ws []string, s string) bool {
	for _, w := range ws {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// TestPayloadOfRR: a request/response side's payload from its
// transactions, worked by hand: 10 transactions of 100-byte requests and
// 1000-byte responses are 1000 bytes sent and 10000 received by the
// client, and the other way round by the server.
func TestPayloadOfRR(t *testing.T) {
	sp := spec.Default()
	sp.Kind, sp.RequestSize, sp.ResponseSize = spec.TCPRR, 100, 1000
	side := func(r Role) SideResult {
		return SideResult{Flows: []Flow{{Role: r, Streams: []StreamSide{{ID: 1, Role: r, Packets: 10}}}}}
	}
	if tx, rx, _ := payloadOf(sp, side(Requester)); tx != 1000 || rx != 10000 {
		t.Errorf("client: %d sent, %d received; want 1000, 10000", tx, rx)
	}
	if tx, rx, _ := payloadOf(sp, side(Responder)); tx != 10000 || rx != 1000 {
		t.Errorf("server: %d sent, %d received; want 10000, 1000", tx, rx)
	}
}

// TestWireFrames checks the frames on the wire against values worked
// out by hand. The client sends TCP_STREAM over 2 s with an MSS of 1448;
// its device got 100 super-packets of 44 segments each, 66 bytes of
// headers (Ethernet 14, IPv4 20, TCP 32) and 44 x 1448 = 63,712 of
// payload: 6,377,800 bytes. On a physical wire they are 4400 frames of
// 1514 bytes (6,661,600). Its tbf counts them so; without a qdisc
// that counts (noqueue), the estimate from the bytes gives the same;
// a qdisc that saw fewer packets than the device (traffic that
// bypassed it) is not taken. The peer acknowledged 6,000,000 bytes of
// the 9,000,000 the program wrote, and the receiver's kernel received
// 6,100,000 of which the program read 5,000,000.
func TestWireFrames(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.TCPStream
	env := &sysinfo.Env{Peer: "10.0.0.2"}
	acked, received := int64(6_000_000), int64(6_100_000)
	snd := flow(spec.ClientToServer, Local, Sender, 2, map[int]int64{1: 9_000_000})
	snd.Streams[0].AckedBytes = &acked
	snd.Streams[0].TCPInfo = &measure.TCPInfo{SndMSS: 1448}
	rcv := flow(spec.ClientToServer, Remote, Receiver, 2, map[int]int64{1: 5_000_000})
	rcv.Streams[0].ReceivedBytes = &received
	rcv.Streams[0].TCPInfo = &measure.TCPInfo{SndMSS: 1448}
	link := netdev.LinkCounters{TxPackets: 100, TxBytes: 6_377_800, RxPackets: 50, RxBytes: 50 * 66}
	tbf := &netdev.QdiscWire{Kind: "tbf", SentPackets: 4400, SentBytes: 6_661_600}
	remote := SideResult{Side: Remote, Env: env, Flows: []Flow{rcv}, Wire: &netdev.Wire{Device: "eth1", ElapsedS: 2,
		Link: netdev.LinkCounters{TxPackets: 50, TxBytes: 50 * 66, RxPackets: 100, RxBytes: 6_377_800}}}
	for _, c := range []struct {
		name  string
		qdisc *netdev.QdiscWire
		from  string
	}{
		{"tbf", tbf, "qdisc"},
		{"noqueue", &netdev.QdiscWire{Kind: "noqueue"}, "estimate"},
		{"no qdisc", nil, "estimate"},
		{"bypassed", &netdev.QdiscWire{Kind: "fq_codel", SentPackets: 50, SentBytes: 50 * 1514}, "estimate"},
	} {
		local := SideResult{Side: Local, Env: env, Flows: []Flow{snd}, Wire: &netdev.Wire{Device: "eth0", ElapsedS: 2, Link: link, Qdisc: c.qdisc}}
		res := Join(sp, local, remote)
		w, r := res.Local.Wire, res.Remote.Wire
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"device pps", w.TxPacketsPerSecond, 50},
			{"device B/pkt", w.TxBytesPerPacket, 63_778},
			{"tx frames/s", w.TxFramesPerSecond, 2200},
			{"tx B/frame", w.TxBytesPerFrame, 1514},
			{"rx frames/s (ACKs)", w.RxFramesPerSecond, 25},
			{"rx B/frame", w.RxBytesPerFrame, 66},
			{"receiver rx frames/s", r.RxFramesPerSecond, 2200},
			{"receiver rx B/frame", r.RxBytesPerFrame, 1514},
			{"summary frames/s", res.Summary.SenderWireFramesPerSecond, 2200},
			{"summary B/frame", res.Summary.SenderWireBytesPerFrame, 1514},
			{"tx goodput: acknowledged", w.TxGoodputBitsPerSecond, 8 * 6_000_000 / 2.0},
			{"receiver rx goodput: the kernel's", r.RxGoodputBitsPerSecond, 8 * 6_100_000 / 2.0},
		} {
			if !near(f.got, f.want) {
				t.Errorf("%s: %s = %v, want %v", c.name, f.name, f.got, f.want)
			}
		}
		if w.TxFramesFrom != c.from || r.TxFramesFrom != "estimate" || w.SegmentBytes != 1448 || !w.GoodputLeft {
			t.Errorf("%s: frames from %q (receiver's %q), segment %d, goodput left %v; want %q, estimate, 1448, true",
				c.name, w.TxFramesFrom, r.TxFramesFrom, w.SegmentBytes, w.GoodputLeft, c.from)
		}
	}

	// Without the kernel's counts (an older kernel, an iperf3 peer), the
	// goodput is what the program wrote and read, and says so.
	snd.Streams[0].AckedBytes = nil
	res := Join(sp, SideResult{Side: Local, Env: env, Flows: []Flow{snd}, Wire: &netdev.Wire{Device: "eth0", ElapsedS: 2, Link: link}}, remote)
	if w := res.Local.Wire; !near(w.TxGoodputBitsPerSecond, 8*9_000_000/2.0) || w.GoodputLeft {
		t.Errorf("without bytes_acked: tx goodput %v, left %v; want %v, false", w.TxGoodputBitsPerSecond, w.GoodputLeft, 8*9_000_000/2.0)
	}

	// Loopback has no wire: no frames.
	res = Join(sp, SideResult{Side: Local, Env: env, Flows: []Flow{snd}, Wire: &netdev.Wire{Device: "lo", Loopback: true, ElapsedS: 2, Link: link}}, remote)
	if w := res.Local.Wire; w.TxFramesPerSecond != 0 || w.TxFramesFrom != "" || res.Summary.SenderWireFramesPerSecond != 0 {
		t.Errorf("loopback: %v frames/s from %q, summary %v; want none", w.TxFramesPerSecond, w.TxFramesFrom, res.Summary.SenderWireFramesPerSecond)
	}
}

// TestFramesOf: UDP datagrams of 1472 bytes are one frame each (1000
// packets of 1514 bytes); fragments already are (3 packets a 4000-byte
// datagram: the device counts them); a packet of less than a segment
// is one frame; a super-packet of 2.5 segments is 3 (the last short);
// without a segment size, the packets.
func TestFramesOf(t *testing.T) {
	for _, c := range []struct {
		name                     string
		packets, bytes           uint64
		header, segment          int
		wantFrames, wantBytesPer float64
	}{
		{"udp 1472", 1000, 1000 * 1514, 42, 1472, 1000, 1514},
		{"fragments", 3000, 1000 * (4000 + 3*42), 42, 4000, 3000, 1000 * (4000 + 3*42) / 3000.0},
		{"small", 10, 10 * 166, 66, 1448, 10, 166},
		{"2.5 segments", 1, 66 + 3620, 66, 1448, 3, (66*3 + 3620) / 3.0},
		{"no segment", 5, 5 * 9000, 66, 0, 5, 9000},
	} {
		f, b := framesOf(c.packets, c.bytes, c.header, c.segment)
		if !near(f, c.wantFrames) || !near(b/f, c.wantBytesPer) {
			t.Errorf("%s: %v frames of %v B, want %v of %v", c.name, f, b/f, c.wantFrames, c.wantBytesPer)
		}
	}
}

// TestMeanSummaryFrames: the mean of the sender's frames is over the
// iterations that have them, as the packets' is: 100 frames/s of 1514
// bytes and 300 of 1500, with an iteration on loopback (none), are 200
// of 1507; the packets' mean is over all three.
func TestMeanSummaryFrames(t *testing.T) {
	m := MeanSummary([]Summary{
		{SenderWirePacketsPerSecond: 10, SenderWireBytesPerPacket: 15000, SenderWireFramesPerSecond: 100, SenderWireBytesPerFrame: 1514},
		{SenderWirePacketsPerSecond: 30, SenderWireBytesPerPacket: 14000, SenderWireFramesPerSecond: 300, SenderWireBytesPerFrame: 1500},
		{SenderWirePacketsPerSecond: 20, SenderWireBytesPerPacket: 65000},
	})
	if !near(m.SenderWireFramesPerSecond, 200) || !near(m.SenderWireBytesPerFrame, 1507) || !near(m.SenderWirePacketsPerSecond, 20) {
		t.Errorf("mean frames %v/s of %v B, packets %v/s; want 200 of 1507, 20", m.SenderWireFramesPerSecond, m.SenderWireBytesPerFrame, m.SenderWirePacketsPerSecond)
	}
}
