package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Multipath TCP (--mptcp): the client dials its data connections with
// Options.MPTCP, the server accepts them on a listener of the test's own
// (ListenMPTCP), and each side asks the kernel whether a connection is
// MPTCP after its handshake ((*net.TCPConn).MultipathTCP): a peer or a
// middlebox that refused it leaves a TCP connection, which the result
// names. Go falls back to TCP without a word when the kernel has no
// MPTCP, so CheckMPTCP asks the kernel first.

// ErrNoMPTCP is a kernel without Multipath TCP, or with it disabled.
var ErrNoMPTCP = errors.New("no Multipath TCP")

// CheckMPTCP returns nil when the kernel whose /proc is procRoot lets
// this network namespace open MPTCP sockets (net.mptcp.enabled = 1), else
// an error wrapping ErrNoMPTCP that names the sysctl and the remedy.
func CheckMPTCP(procRoot string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("%w: --mptcp needs Linux (5.6 or later), this is %s", ErrNoMPTCP, runtime.GOOS)
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "sys/net/mptcp/enabled"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: this kernel has no MPTCP (no sysctl net.mptcp.enabled): use a kernel built with CONFIG_MPTCP, or run without --mptcp", ErrNoMPTCP)
	case err != nil:
		return fmt.Errorf("%w: read sysctl net.mptcp.enabled: %v", ErrNoMPTCP, err)
	case strings.TrimSpace(string(b)) != "1":
		return fmt.Errorf("%w: MPTCP is disabled here (sysctl net.mptcp.enabled = %s): enable it with sysctl -w net.mptcp.enabled=1, or run without --mptcp",
			ErrNoMPTCP, strings.TrimSpace(string(b)))
	}
	return nil
}

// ListenMPTCP opens an MPTCP listener on an ephemeral port of host for a
// test's data connections, with opts set on it so that every accepted
// connection inherits them. A client that does not speak MPTCP is still
// accepted, as TCP.
func ListenMPTCP(network, host string, opts Options) (*net.TCPListener, error) {
	lc := net.ListenConfig{Control: controlOpts(opts)}
	lc.SetMultipathTCP(true)
	ln, err := lc.Listen(context.Background(), network, net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	return ln.(*net.TCPListener), nil
}

// IsMPTCP reports whether c is a Multipath TCP connection: false for a
// connection that fell back to TCP or was never MPTCP.
func IsMPTCP(c net.Conn) bool {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	mp, err := tc.MultipathTCP()
	return err == nil && mp
}
