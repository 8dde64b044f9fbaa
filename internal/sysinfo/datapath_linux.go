package sysinfo

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"wirespeed/internal/run"
)

// probeDataPath tries the socket options on sockets of its own: a kernel
// built without a feature refuses it whatever its release.
func probeDataPath(s *run.DataPathSupport) error {
	try := func(typ, level, opt, val int) (bool, error) {
		fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return false, fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		err = unix.SetsockoptInt(fd, level, opt, val)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.ENOPROTOOPT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
			return false, nil
		}
		return false, err
	}
	var err error
	if s.MsgZeroCopy, err = try(unix.SOCK_STREAM, unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1); err != nil {
		return fmt.Errorf("SO_ZEROCOPY: %w", err)
	}
	if s.UDPGSO, err = try(unix.SOCK_DGRAM, unix.SOL_UDP, unix.UDP_SEGMENT, 1400); err != nil {
		return fmt.Errorf("UDP_SEGMENT: %w", err)
	}
	if s.UDPGRO, err = try(unix.SOCK_DGRAM, unix.SOL_UDP, unix.UDP_GRO, 1); err != nil {
		return fmt.Errorf("UDP_GRO: %w", err)
	}
	s.Probed = true
	return nil
}
