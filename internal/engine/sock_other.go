//go:build !linux

package engine

import (
	"fmt"
	"net/netip"
	"syscall"
)

func setSockOpts(fd uintptr, opts Options) error {
	if opts.SockBuf > 0 {
		if err := syscall.SetsockoptInt(sysFD(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_SNDBUF %d: %w", opts.SockBuf, err)
		}
		if err := syscall.SetsockoptInt(sysFD(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, opts.SockBuf); err != nil {
			return fmt.Errorf("set SO_RCVBUF %d: %w", opts.SockBuf, err)
		}
	}
	if opts.CongestionControl != "" {
		return fmt.Errorf("choosing the congestion control is supported on Linux only")
	}
	if opts.BusyPollMicros > 0 {
		return fmt.Errorf("busy polling is supported on Linux only")
	}
	return nil
}

func sockInfo(fd uintptr) (SocketInfo, error) {
	var si SocketInfo
	var err error
	if si.SndBuf, err = syscall.GetsockoptInt(sysFD(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF); err != nil {
		return si, fmt.Errorf("get SO_SNDBUF: %w", err)
	}
	if si.RcvBuf, err = syscall.GetsockoptInt(sysFD(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF); err != nil {
		return si, fmt.Errorf("get SO_RCVBUF: %w", err)
	}
	return si, nil
}

func bufInfo(fd uintptr) (SocketInfo, error) { return sockInfo(fd) }

func connectFD(fd uintptr, peer netip.AddrPort) error { return connectPeer(fd, peer) }
