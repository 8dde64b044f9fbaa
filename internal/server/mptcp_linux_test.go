package server_test

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"wirespeed/internal/client"
	"wirespeed/internal/engine"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// mptcpMIB reads the kernel's MPTcpExt counters from /proc/net/netstat:
// what the kernel saw, which wirespeed did not compute.
func mptcpMIB(t *testing.T) map[string]int64 {
	t.Helper()
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		t.Skipf("no /proc/net/netstat: %v", err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "MPTcpExt:" {
			continue
		}
		if names == nil {
			names = fields[1:]
			continue
		}
		out := map[string]int64{}
		for i, v := range fields[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			out[names[i]] = n
		}
		return out
	}
	t.Skip("the kernel has no MPTcpExt counters")
	return nil
}

// startPlainServer runs a server on a plain TCP listener of 127.0.0.1,
// as wirespeed serve listens (cli's listenTCP); Go's own listeners are
// MPTCP by default, which would let a client's MPTCP connections to the
// server's port succeed whatever the server's test listener.
func startPlainServer(t *testing.T) string {
	t.Helper()
	lc := net.ListenConfig{}
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.New(server.Config{Logger: slog.New(slog.DiscardHandler)}).Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ln.Addr().String()
}

func requireMPTCP(t *testing.T) {
	t.Helper()
	if err := engine.CheckMPTCP("/proc"); err != nil {
		t.Skip(err)
	}
}

// mptcpRecords are the MPTCP records of every stream side of res, and
// how many stream sides have none.
func mptcpRecords(res result.Result) (active, fellBack, none int) {
	for _, s := range res.Streams {
		for _, ss := range []result.StreamSide{s.Sender, s.Receiver} {
			switch {
			case ss.MPTCP == nil:
				none++
			case ss.MPTCP.Active:
				active++
			default:
				fellBack++
			}
		}
	}
	return
}

// TestMPTCPStreams: with --mptcp every data connection is Multipath TCP
// on both sides, as both kernels say: each side's MultipathTCP(), and
// the kernel's count of MP_CAPABLE SYNs the server received and
// SYN-ACKs the client received, up by the number of streams exactly
// (the control connection stays TCP and adds none).
func TestMPTCPStreams(t *testing.T) {
	requireMPTCP(t)
	c := mustDial(t, client.Config{Addr: startPlainServer(t)})
	defer c.Close()
	const streams = 3
	sp := shortSpec(spec.TCPStream, streams)
	sp.MPTCP = true
	before := mptcpMIB(t)
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	after := mptcpMIB(t)
	for _, k := range []string{"MPCapableSYNRX", "MPCapableSYNACKRX"} {
		if got := after[k] - before[k]; got != streams {
			t.Errorf("kernel's %s went up by %d, want %d (one per stream)", k, got, streams)
		}
	}
	if active, fell, none := mptcpRecords(res); active != 2*streams || fell != 0 || none != 0 {
		t.Errorf("stream sides: %d MPTCP, %d fell back, %d without a record; want %d, 0, 0", active, fell, none, 2*streams)
	}
	for _, w := range res.Warnings {
		if w.Code == result.WarnMPTCPFallback || w.Code == result.WarnNoMPTCPRecord {
			t.Errorf("warning %s: %s", w.Code, w.Key())
		}
	}
	// MPTCP_INFO: one subflow each on loopback, and the receiver's
	// kernel received at the data level what wirespeed read plus the
	// data header the server read before the test (4 bytes of magic,
	// a 16-byte token, a 4-byte stream id: 24).
	const dataHeader = 4 + 16 + 4
	for _, s := range res.Streams {
		for _, ss := range []result.StreamSide{s.Sender, s.Receiver} {
			if ss.MPTCP == nil || ss.MPTCP.Info == nil {
				t.Errorf("stream %d %s: no MPTCP_INFO", s.ID, ss.Role)
				continue
			}
			if got := ss.MPTCP.Info.Subflows; got != 1 {
				t.Errorf("stream %d %s: %d subflows, want 1 on loopback", s.ID, ss.Role, got)
			}
		}
		if mi := s.Receiver.MPTCP; mi != nil && mi.Info != nil && s.Receiver.Complete && mi.Info.BytesReceived != s.Receiver.TotalBytes+dataHeader {
			t.Errorf("stream %d: the receiver's kernel received %d bytes (MPTCP_INFO), wirespeed read %d and a %d-byte header", s.ID, mi.Info.BytesReceived, s.Receiver.TotalBytes, dataHeader)
		}
	}
}

// TestMPTCPFallback: a server whose test listener is plain TCP (as a
// server that predates --mptcp accepts on its TCP port) leaves the
// client's MPTCP connections TCP; the result says so for both sides,
// and no MP_CAPABLE SYN-ACK came back.
func TestMPTCPFallback(t *testing.T) {
	requireMPTCP(t)
	defer server.SetListenMPTCP(func(network, host string) (*net.TCPListener, error) {
		lc := net.ListenConfig{}
		lc.SetMultipathTCP(false)
		ln, err := lc.Listen(context.Background(), network, net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		return ln.(*net.TCPListener), nil
	})()
	c := mustDial(t, client.Config{Addr: startPlainServer(t)})
	defer c.Close()
	sp := shortSpec(spec.TCPStream, 2)
	sp.MPTCP = true
	before := mptcpMIB(t)
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	after := mptcpMIB(t)
	if got := after["MPCapableSYNACKRX"] - before["MPCapableSYNACKRX"]; got != 0 {
		t.Errorf("kernel's MPCapableSYNACKRX went up by %d over a plain TCP listener, want 0", got)
	}
	if active, fell, none := mptcpRecords(res); active != 0 || fell != 4 || none != 0 {
		t.Errorf("stream sides: %d MPTCP, %d fell back, %d without a record; want 0, 4, 0", active, fell, none)
	}
	sides := map[string]bool{}
	for _, w := range res.Warnings {
		if w.Code == result.WarnMPTCPFallback && w.Figure("streams") == 2 && w.Figure("of") == 2 {
			sides[w.Name("side")] = true
		}
	}
	if !sides["local"] || !sides["remote"] {
		t.Errorf("want a fallback warning of 2 of 2 streams for both sides, got %v", res.Warnings)
	}
}
