package engine

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// The socket options of Options beyond buffers and congestion control:
// where a socket binds (LocalAddr, LocalPort, BindDev) and how its
// packets go out (TOS, MSS, DontFragment). setSockOpts applies them with
// the others, before bind, connect or listen; sockopts_linux.go sets
// them, and the other platforms refuse those they cannot honour.

// DatagramTooBigError is a datagram the kernel would not send because it
// is larger than the path MTU allows and may not be fragmented
// (Options.DontFragment, or a socket that otherwise forbids it).
type DatagramTooBigError struct {
	Size         int  // UDP payload bytes of the datagram
	PathMTU      int  // the socket's path MTU (IP_MTU, IPV6_MTU); 0 when unknown
	Header       int  // IP and UDP header bytes: 28 over IPv4, 48 over IPv6
	DontFragment bool // the socket forbids fragmenting (IP_PMTUDISC_DO)
}

func (e *DatagramTooBigError) Error() string {
	why := "the kernel refused to send it (EMSGSIZE)"
	if e.DontFragment {
		why = "--dont-fragment forbids fragmenting it"
	}
	if e.PathMTU <= e.Header {
		return fmt.Sprintf("a datagram of %d bytes does not fit the path and %s: send smaller datagrams", e.Size, why)
	}
	fit := e.PathMTU - e.Header
	msg := fmt.Sprintf("a datagram of %d bytes does not fit the path MTU of %d bytes (%d bytes of payload after the %d-byte IP and UDP headers) and %s: send at most %d bytes per datagram (-m %d, or -r for UDP_RR)",
		e.Size, e.PathMTU, fit, e.Header, why, fit, fit)
	if e.DontFragment {
		msg += ", or leave out --dont-fragment to let the kernel fragment"
	}
	return msg
}

// Unwrap makes the error an EMSGSIZE to errors.Is.
func (e *DatagramTooBigError) Unwrap() error { return syscall.EMSGSIZE }

// tooBig turns EMSGSIZE from sending a datagram of size bytes on fd into
// a DatagramTooBigError that says the path MTU; other errors pass as
// they are. Only on a failure: it reads the socket.
func tooBig(fd uintptr, size int, err error) error {
	if !errors.Is(err, syscall.EMSGSIZE) {
		return err
	}
	e := &DatagramTooBigError{Size: size}
	e.PathMTU, e.Header, e.DontFragment = pathMTU(fd)
	return e
}

// tooBigRC is tooBig through a RawConn.
func tooBigRC(rc syscall.RawConn, size int, err error) error {
	if rc == nil || !errors.Is(err, syscall.EMSGSIZE) {
		return err
	}
	out := err
	if cerr := rc.Control(func(fd uintptr) { out = tooBig(fd, size, err) }); cerr != nil {
		return err
	}
	return out
}

// localAddr is where opts bind a socket of network ("tcp…" or "udp…"):
// nil for anywhere on an ephemeral port.
func localAddr(network string, opts Options) net.Addr {
	if !opts.LocalAddr.IsValid() && opts.LocalPort == 0 {
		return nil
	}
	var ip net.IP
	if opts.LocalAddr.IsValid() {
		ip = net.IP(opts.LocalAddr.Unmap().AsSlice())
	}
	if len(network) >= 3 && network[:3] == "udp" {
		return &net.UDPAddr{IP: ip, Port: opts.LocalPort}
	}
	return &net.TCPAddr{IP: ip, Port: opts.LocalPort}
}

// ControlDialer returns a dialer for the client's control connection:
// from opts.LocalAddr, on opts.BindDev, within timeout. It applies no
// other option: the control connection is not measured.
func ControlDialer(opts Options, timeout time.Duration) net.Dialer {
	bind := Options{LocalAddr: opts.LocalAddr, BindDev: opts.BindDev}
	return net.Dialer{
		Timeout:   timeout,
		LocalAddr: localAddr("tcp", bind),
		Control:   controlOpts(bind),
	}
}

// controlOpts is a dialer's or listener's Control that applies opts.
func controlOpts(opts Options) func(string, string, syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = setSockOpts(fd, opts) }); err != nil {
			return err
		}
		return serr
	}
}

// explainBind adds to a failed dial what a bind option has to do with
// it: an address this host does not have, a port in use.
func explainBind(err error, opts Options) error {
	switch {
	case opts.LocalAddr.IsValid() && errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%w: is %s an address of this host (-B)?", err, opts.LocalAddr)
	case opts.LocalPort > 0 && errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%w: local port %d is taken (--cport); choose another or wait for it to be free", err, opts.LocalPort)
	case opts.LocalAddr.IsValid() && errors.Is(err, syscall.EAFNOSUPPORT):
		return fmt.Errorf("%w: the bind address %s (-B) and the server's address are of different IP versions", err, opts.LocalAddr)
	}
	return err
}
