// Package measure owns the samplers: TCP_INFO of a socket, CPU time
// (/proc/stat, getrusage), the CPU time of processes and threads
// (/proc/PID/stat, schedstat) and kernel counters. Samplers that read
// /proc take the proc root as a parameter so tests can feed them fixture
// trees.
package measure

import (
	"errors"
	"syscall"

	"wirespeed/internal/run"
)

// ErrUnsupported is returned where the platform does not offer a sampler.
var ErrUnsupported = errors.New("not supported on this platform")

// TCPInfo reads the kernel's TCP_INFO for the socket behind rc.
// On platforms without TCP_INFO it returns ErrUnsupported.
func TCPInfo(rc syscall.RawConn) (run.TCPInfo, error) {
	return tcpInfo(rc)
}
