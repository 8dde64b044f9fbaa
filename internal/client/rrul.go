package client

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"wirespeed/internal/control"
	"wirespeed/internal/endpoint"
	"wirespeed/internal/engine"
	"wirespeed/internal/spec"
)

// dialProbe opens an RRUL run's UDP probe socket to the server's probe
// port and proves the test's token on it (as stream 1), as a UDP test's
// streams are proven: the server echoes nothing before.
func (c *Client) dialProbe(ctx context.Context, t spec.Test, acc control.Accepted) error {
	network := "udp"
	switch c.network {
	case "tcp4":
		network = "udp4"
	case "tcp6":
		network = "udp6"
	}
	addr := net.JoinHostPort(c.serverIP(), strconv.Itoa(acc.UDPPorts[0]))
	opts := engine.Options{SockBuf: t.LocalSockBuf, LocalAddr: t.BindIP(), BindDev: t.BindDev, TOS: t.TOS}
	uc, err := engine.DialUDP(ctx, network, addr, opts)
	if err != nil {
		return fmt.Errorf("UDP probe socket to %s: %w", addr, err)
	}
	if err := proveUDP(ctx, uc, acc.Token, 1); err != nil {
		uc.Close()
		return fmt.Errorf("UDP probe socket to %s: %w", addr, err)
	}
	c.probe = uc
	return nil
}

func (c *Client) closeProbe() {
	if c.probe != nil {
		c.probe.Close()
		c.probe = nil
	}
}

// probes are the client's probe sockets for endpoint.RunRRUL: the proven UDP
// socket, and the server's TCP probe listener, which each TCP probe
// connects to with the TCP options of the test but its marks.
func (c *Client) probes(t spec.Test, acc control.Accepted) endpoint.Probes {
	return endpoint.Probes{
		UDP:        c.probe,
		TCPNetwork: c.network,
		TCPAddr:    net.JoinHostPort(c.serverIP(), strconv.Itoa(acc.CRRPort)),
		TCPOptions: engine.ClientOptions(t, spec.Stream{}),
		Peer:       addrOfConn(c.cc.NetConn().RemoteAddr()),
	}
}

func addrOfConn(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}
