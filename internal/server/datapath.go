package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/engine"
	"wirespeed/internal/spec"
)

// tcpStreams reports whether a test's data connections are TCP connections
// made once, on the server's port.
func tcpStreams(t spec.Test) bool { return !t.Kind.UDP() && t.Kind != spec.TCPCRR }

// dataPath holds the sockets a test needs beyond TCP data connections: a
// UDP socket per stream, or a TCP_CRR listener. They listen on the address
// the client reached the server on, on ephemeral ports.
type dataPath struct {
	peer      netip.Addr
	udp       []*net.UDPConn
	crr       *net.TCPListener
	crrShared *engine.CRRShared
	mptcp     *net.TCPListener // the test's data connections under --mptcp (mptcp.go)
	dropped   int              // datagrams from anyone but the proven peer, before the test
}

// listenMPTCP opens a --mptcp test's listener; a test makes it plain
// TCP, as a server that predates --mptcp or a kernel that refuses MPTCP
// leaves the connections.
var listenMPTCP = engine.ListenMPTCP

func openDataPath(t spec.Test, local, peer netip.Addr) (*dataPath, error) {
	dp := &dataPath{peer: peer}
	suffix := "4"
	if local.Is6() && !local.Is4In6() {
		suffix = "6"
	}
	host := local.Unmap().String()
	switch {
	case t.Kind.UDP():
		for _, st := range t.Streams() {
			c, err := engine.ListenUDP("udp"+suffix, host, engine.ServerOptions(t, st))
			if err != nil {
				dp.close()
				return nil, err
			}
			dp.udp = append(dp.udp, c)
		}
	case t.Kind == spec.RRUL:
		// The probes: a UDP socket that echoes, proven as stream 1, and
		// a listener that answers TCP probes as TCP_CRR's does.
		c, err := engine.ListenUDP("udp"+suffix, host, engine.Options{SockBuf: t.RemoteSockBuf, TOS: t.TOS})
		if err != nil {
			return nil, err
		}
		dp.udp = append(dp.udp, c)
		ln, err := engine.ListenCRR("tcp"+suffix, host, engine.ServerOptions(t, spec.Stream{}))
		if err != nil {
			dp.close()
			return nil, err
		}
		dp.crr = ln
	case t.MPTCP && tcpStreams(t):
		ln, err := listenMPTCP("tcp"+suffix, host, engine.ServerOptions(t, spec.Stream{}))
		if err != nil {
			return nil, err
		}
		dp.mptcp = ln
	case t.Kind == spec.TCPCRR:
		ln, err := engine.ListenCRR("tcp"+suffix, host, engine.ServerOptions(t, spec.Stream{}))
		if err != nil {
			dp.close()
			return nil, err
		}
		dp.crr = ln
		// On Linux this takes the listener out of Go's poller and closes
		// ln; crrPort still reads its address.
		if dp.crrShared, err = engine.NewCRRShared(ln, peer); err != nil {
			dp.close()
			return nil, err
		}
	}
	return dp, nil
}

func (dp *dataPath) udpPorts() []int {
	var ports []int
	for _, c := range dp.udp {
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports
}

func (dp *dataPath) crrPort() int {
	if dp.crr == nil {
		return 0
	}
	return dp.crr.Addr().(*net.TCPAddr).Port
}

// close closes every socket; the side has closed the UDP ones already
// after a run, which is harmless.
func (dp *dataPath) close() {
	for _, c := range dp.udp {
		c.Close()
	}
	if dp.crr != nil {
		dp.crr.Close()
	}
	if dp.crrShared != nil {
		dp.crrShared.Close()
	}
	if dp.mptcp != nil {
		dp.mptcp.Close()
	}
}

// dataPort is the port the test's TCP data connections go to: its MPTCP
// listener's, else own (the control connection's).
func (dp *dataPath) dataPort(own int) int {
	if dp.mptcp == nil {
		return own
	}
	return dp.mptcp.Addr().(*net.TCPAddr).Port
}

// proveUDP waits until every UDP socket received its stream's data header
// from the control connection's address, then connects the socket to the
// address it came from and acknowledges. Until then the server sends
// nothing on it: it never sends UDP to an address that did not first
// prove the token. Datagrams from anyone else are dropped and counted.
func (dp *dataPath) proveUDP(ctx context.Context, tok control.Token, timeout time.Duration, log *slog.Logger) error {
	if len(dp.udp) == 0 {
		return nil
	}
	deadline := time.Now().Add(timeout)
	var wg sync.WaitGroup
	errs := make([]error, len(dp.udp))
	drops := make([]int, len(dp.udp))
	for i, c := range dp.udp {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = dp.prove(ctx, c, tok, i+1, deadline, &drops[i])
		}()
	}
	wg.Wait()
	for _, d := range drops {
		dp.dropped += d
	}
	if dp.dropped > 0 {
		log.Warn("dropped datagrams that did not prove the test's token", "count", dp.dropped)
	}
	return errors.Join(errs...)
}

func (dp *dataPath) prove(ctx context.Context, c *net.UDPConn, tok control.Token, id int, deadline time.Time, drops *int) error {
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	c.SetReadDeadline(deadline)
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 64)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return fmt.Errorf("UDP stream %d: no data header from %s: %w", id, dp.peer, err)
		}
		t, sid, perr := control.ParseDataHeader(buf[:n])
		if perr != nil || t != tok || sid != id || from.Addr().Unmap() != dp.peer {
			*drops++
			continue
		}
		if err := engine.ConnectUDP(c, from); err != nil {
			return err
		}
		if _, err := c.Write(control.DataAck(tok, id)); err != nil {
			return fmt.Errorf("UDP stream %d: acknowledge: %w", id, err)
		}
		return nil
	}
}
