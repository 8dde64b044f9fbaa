//go:build !wirespeed_portable

package engine

import (
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

func setSockOpts(fd uintptr, opts Options) error {
	if err := setIPOpts(fd, opts); err != nil {
		return err
	}
	if opts.SockBuf > 0 {
		if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_SNDBUF %d: %w", opts.SockBuf, err)
		}
		if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_RCVBUF %d: %w", opts.SockBuf, err)
		}
	}
	if opts.CongestionControl != "" {
		if err := unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, opts.CongestionControl); err != nil {
			return fmt.Errorf("set congestion control %q: %w (sysctl net.ipv4.tcp_available_congestion_control lists the loaded ones)", opts.CongestionControl, err)
		}
	}
	if opts.BusyPollMicros > 0 {
		if _, err := setBusyPollFD(int(fd), opts.BusyPollMicros); err != nil {
			return err
		}
	}
	return nil
}

func sockInfo(fd uintptr) (SocketInfo, error) {
	var si SocketInfo
	var err error
	if si.SndBuf, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF); err != nil {
		return si, fmt.Errorf("get SO_SNDBUF: %w", err)
	}
	if si.RcvBuf, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil {
		return si, fmt.Errorf("get SO_RCVBUF: %w", err)
	}
	if si.CongestionControl, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION); err != nil {
		return si, fmt.Errorf("get TCP_CONGESTION: %w", err)
	}
	return si, nil
}

func bufInfo(fd uintptr) (SocketInfo, error) {
	var si SocketInfo
	var err error
	if si.SndBuf, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF); err != nil {
		return si, fmt.Errorf("get SO_SNDBUF: %w", err)
	}
	if si.RcvBuf, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil {
		return si, fmt.Errorf("get SO_RCVBUF: %w", err)
	}
	return si, nil
}

func connectFD(fd uintptr, peer netip.AddrPort) error {
	a := peer.Addr()
	var sa unix.Sockaddr
	dom, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return err
	}
	if dom == unix.AF_INET6 {
		sa = &unix.SockaddrInet6{Port: int(peer.Port()), Addr: a.As16()}
	} else {
		sa = &unix.SockaddrInet4{Port: int(peer.Port()), Addr: a.Unmap().As4()}
	}
	return unix.Connect(int(fd), sa)
}

// unsent reads SIOCOUTQ (Unsent).
func unsent(c syscall.Conn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
		return 0, err
	}
	return n, ierr
}

// linuxEngine says the Linux loops and sockets are built (engine_other.go
// holds the portable ones, which a Linux build with the
// wirespeed_portable tag tests).
const linuxEngine = true
