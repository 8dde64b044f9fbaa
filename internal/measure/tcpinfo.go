package measure

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrUnsupported is returned where the platform does not offer a sampler.
// It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("%w on this platform", errors.ErrUnsupported)

// ReadTCPInfo reads the kernel's TCP_INFO for the socket behind rc.
// On platforms without TCP_INFO it returns ErrUnsupported.
func ReadTCPInfo(rc syscall.RawConn) (TCPInfo, error) {
	return tcpInfo(rc)
}
