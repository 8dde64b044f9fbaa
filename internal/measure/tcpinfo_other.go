//go:build !linux

package measure

import (
	"syscall"

	"wirespeed/internal/run"
)

func tcpInfo(syscall.RawConn) (run.TCPInfo, error) { return run.TCPInfo{}, ErrUnsupported }
