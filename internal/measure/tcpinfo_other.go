//go:build !linux

package measure

import (
	"syscall"
)

func tcpInfo(syscall.RawConn) (TCPInfo, error) { return TCPInfo{}, ErrUnsupported }
