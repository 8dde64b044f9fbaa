//go:build unix && !linux

package engine

import (
	"net/netip"
	"syscall"
)

func connectPeer(fd uintptr, peer netip.AddrPort) error {
	a := peer.Addr()
	sa, err := syscall.Getsockname(int(fd))
	if err != nil {
		return err
	}
	if _, ok := sa.(*syscall.SockaddrInet6); ok {
		return syscall.Connect(int(fd), &syscall.SockaddrInet6{Port: int(peer.Port()), Addr: a.As16()})
	}
	return syscall.Connect(int(fd), &syscall.SockaddrInet4{Port: int(peer.Port()), Addr: a.Unmap().As4()})
}
