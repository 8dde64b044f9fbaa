package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// UDPReceiveBuffer is the receive buffer a UDP_STREAM receiver asks for
// when the user asked for none: the system default (about 200 KiB) holds
// only a millisecond or two of a fast stream, so a receiver descheduled
// that long loses datagrams to its own buffer, which is not what a path
// test measures. The kernel caps it at net.core.rmem_max, and the result
// records what was granted.
const UDPReceiveBuffer = 4 << 20

// ListenUDP opens a UDP data socket on an ephemeral port of host for the
// server side of a UDP test. Of opts, SockBuf, TOS and DontFragment
// apply to UDP (and LocalAddr, LocalPort and BindDev to DialUDP).
func ListenUDP(network, host string, opts Options) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: controlUDP(opts)}
	pc, err := lc.ListenPacket(context.Background(), network, net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

// DialUDP opens a UDP data socket connected to addr, the client side of a
// UDP test.
func DialUDP(ctx context.Context, network, addr string, opts Options) (*net.UDPConn, error) {
	d := net.Dialer{Control: controlUDP(opts), LocalAddr: localAddr(network, opts)}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, explainBind(err, opts)
	}
	return c.(*net.UDPConn), nil
}

func controlUDP(opts Options) func(string, string, syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = setSockOpts(fd, udpOpts(opts)) }); err != nil {
			return err
		}
		return serr
	}
}

// udpOpts is the part of opts that applies to a UDP socket.
func udpOpts(opts Options) Options {
	return Options{SockBuf: opts.SockBuf, LocalPort: opts.LocalPort, BindDev: opts.BindDev, TOS: opts.TOS, DontFragment: opts.DontFragment}
}

// ConnectUDP connects the server's UDP socket c to peer, the address that
// proved the test's token: from then on the kernel delivers only that
// peer's datagrams to it, and the server's datagrams go only there.
func ConnectUDP(c *net.UDPConn, peer netip.AddrPort) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = connectFD(fd, peer) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("connect UDP socket to %s: %w", peer, cerr)
	}
	return nil
}
