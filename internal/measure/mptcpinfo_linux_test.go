package measure

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReadMPTCPInfo: an MPTCP connection on loopback moves a number of
// bytes the test chose; the kernel's MPTCP_INFO on the sender says it
// sent and had acked exactly those, the receiver's that it received
// them, over one subflow (loopback has no second path).
func TestReadMPTCPInfo(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled here (net.mptcp.enabled)")
	}
	lc := net.ListenConfig{}
	lc.SetMultipathTCP(true)
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := net.Dialer{Timeout: 5 * time.Second}
	d.SetMultipathTCP(true)
	cc, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	const n = 3<<20 + 123
	go func() { cc.Write(make([]byte, n)) }()
	sc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(sc, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	read := func(c net.Conn) MPTCPInfo {
		rc, _ := c.(*net.TCPConn).SyscallConn()
		mi, err := ReadMPTCPInfo(rc)
		if err != nil {
			t.Fatal(err)
		}
		return mi
	}
	var snd MPTCPInfo
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if snd = read(cc); snd.BytesAcked == n {
			break
		}
	}
	rcv := read(sc)
	if snd.BytesSent != n || snd.BytesAcked != n || rcv.BytesReceived != n {
		t.Errorf("sender sent %d, acked %d; receiver received %d; want %d each", snd.BytesSent, snd.BytesAcked, rcv.BytesReceived, n)
	}
	if snd.Subflows != 1 || rcv.Subflows != 1 {
		t.Errorf("subflows: sender %d, receiver %d, want 1 each on loopback", snd.Subflows, rcv.Subflows)
	}
}
