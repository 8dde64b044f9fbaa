package measure

import (
	"errors"
	"syscall"
)

// ErrUnsupported is returned where the platform does not offer a sampler.
var ErrUnsupported = errors.New("not supported on this platform")

// ReadTCPInfo reads the kernel's TCP_INFO for the socket behind rc.
// On platforms without TCP_INFO it returns ErrUnsupported.
func ReadTCPInfo(rc syscall.RawConn) (TCPInfo, error) {
	return tcpInfo(rc)
}
