// Package measure owns the samplers: TCP_INFO of a socket now, and (later)
// CPU time and kernel counters. Samplers that read /proc take the proc root
// as a parameter so tests can feed them fixture trees.
package measure

import (
	"errors"
	"fmt"
	"syscall"

	"wirespeed/internal/run"
)

// ErrUnsupported is returned where the platform does not offer a sampler.
// It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("%w on this platform", errors.ErrUnsupported)

// TCPInfo reads the kernel's TCP_INFO for the socket behind rc.
// On platforms without TCP_INFO it returns ErrUnsupported.
func TCPInfo(rc syscall.RawConn) (run.TCPInfo, error) {
	return tcpInfo(rc)
}
