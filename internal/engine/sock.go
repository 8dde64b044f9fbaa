package engine

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Dial opens a data connection to addr with opts applied before the
// handshake, so the window scale the kernel offers fits the buffer asked
// for. network is "tcp", "tcp4" or "tcp6".
func Dial(ctx context.Context, network, addr string, opts Options) (*net.TCPConn, error) {
	d := net.Dialer{
		Timeout:   10 * time.Second,
		LocalAddr: localAddr(network, opts),
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) { serr = setSockOpts(fd, opts) }); err != nil {
				return err
			}
			return serr
		},
	}
	d.SetMultipathTCP(opts.MPTCP)
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, explainBind(err, opts)
	}
	tc := c.(*net.TCPConn)
	// Go turns Nagle off on every connection; the tools users compare with
	// leave it on unless asked, so do the same.
	if err := tc.SetNoDelay(opts.NoDelay); err != nil {
		tc.Close()
		return nil, fmt.Errorf("set TCP_NODELAY: %w", err)
	}
	return tc, nil
}

// Configure applies opts to an accepted data connection.
func Configure(c *net.TCPConn, opts Options) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setSockOpts(fd, opts) }); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if err := c.SetNoDelay(opts.NoDelay); err != nil {
		return fmt.Errorf("set TCP_NODELAY: %w", err)
	}
	return nil
}

// Unsent returns how many bytes written on the TCP socket c the peer has
// not yet acknowledged (SIOCOUTQ): 0 once everything sent reached the
// peer's kernel. c may be a *net.TCPConn or an *os.File duplicate of one,
// which stays usable after the connection is closed. Linux only;
// elsewhere it returns ErrUnsupported.
func Unsent(c syscall.Conn) (int, error) { return unsent(c) }

// sysFD is a socket descriptor as the platform's syscall package takes
// it: an int on Unix, a Handle on Windows. The helpers below take the
// syscall function itself, so one call compiles on both.
type sysFD interface{ ~int | ~uintptr }

func setsockoptInt[F sysFD](set func(F, int, int, int) error, fd uintptr, level, opt, v int) error {
	return set(F(fd), level, opt, v)
}

// setReuseAddr sets SO_REUSEADDR (ListenUDPShared).
func setReuseAddr(fd uintptr) error {
	return setsockoptInt(syscall.SetsockoptInt, fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
}
