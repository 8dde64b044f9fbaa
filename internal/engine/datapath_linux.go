//go:build !wirespeed_portable

package engine

import (
	"errors"
	"fmt"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// notSupported reports whether errno says the kernel lacks an option,
// rather than refusing it for this socket or user.
func notSupported(err error) bool {
	return errors.Is(err, unix.ENOPROTOOPT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

func setPacingRate(c Socket, bytesPerSecond uint64) (uint64, error) {
	var got uint64
	err := withFD(c, func(fd int) error {
		err := unix.SetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, bytesPerSecond)
		if errors.Is(err, unix.EINVAL) && bytesPerSecond < math.MaxUint32 {
			// Kernels before 64-bit pacing rates take 32 bits only.
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, int(bytesPerSecond))
		}
		if err != nil {
			return &optError{fmt.Sprintf("set SO_MAX_PACING_RATE %d bytes/s", bytesPerSecond), err}
		}
		if got, err = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE); err != nil {
			return &optError{"get SO_MAX_PACING_RATE", err}
		}
		return nil
	})
	return got, err
}

func setBusyPoll(c Socket, usec int) (int, error) {
	var got int
	err := withFD(c, func(fd int) (err error) {
		got, err = setBusyPollFD(fd, usec)
		return err
	})
	return got, err
}

// setBusyPollFD sets SO_BUSY_POLL on fd and reads it back.
func setBusyPollFD(fd, usec int) (int, error) {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, usec); err != nil {
		if errors.Is(err, unix.EPERM) {
			return 0, fmt.Errorf("set SO_BUSY_POLL %d us: raising it above the system's net.core.busy_read needs CAP_NET_ADMIN; run as root or raise the sysctl: %w", usec, os.ErrPermission)
		}
		return 0, &optError{fmt.Sprintf("set SO_BUSY_POLL %d us", usec), err}
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL)
	if err != nil {
		return 0, &optError{"get SO_BUSY_POLL", err}
	}
	return got, nil
}

func probeBusyPoll(usec int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return setBusyPollFD(fd, usec)
}

func (sh *CRRShared) setBusyPoll(usec int) (int, error) {
	got, err := setBusyPollFD(sh.lfd, usec)
	if err == nil {
		sh.busyPoll = got
	}
	return got, err
}

func napiID(c Socket) (int, error) {
	var id int
	err := withFD(c, func(fd int) (err error) {
		id, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_INCOMING_NAPI_ID)
		if err != nil {
			return &optError{"get SO_INCOMING_NAPI_ID", err}
		}
		return nil
	})
	return id, err
}

func (s *UDPSender) setGSO(size int) error {
	if size < udpHeaderLen || size > s.size {
		return fmt.Errorf("GSO datagram size %d outside %d..%d (the send size)", size, udpHeaderLen, s.size)
	}
	if tail := s.size % size; tail != 0 && tail < udpHeaderLen {
		return fmt.Errorf("send size %d leaves a last datagram of %d bytes, too short for its header", s.size, tail)
	}
	err := withFD(s.conn, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_SEGMENT, size)
	})
	if err != nil {
		return &optError{fmt.Sprintf("set UDP_SEGMENT %d", size), err}
	}
	s.gso = size
	return nil
}

func (r *UDPReceiver) enableGRO() error {
	err := withFD(r.conn, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_GRO, 1)
	})
	if err != nil {
		return &optError{"set UDP_GRO", err}
	}
	r.gro = true
	r.size = udpReceiveSize(r.size, true)
	return nil
}

// probeSupport tries each option on a socket of its own.
func probeSupport() (Support, error) {
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
		case notSupported(err), errors.Is(err, unix.EINVAL):
			// Some kernels say EINVAL for an option they do not know.
			return false, nil
		}
		return false, err
	}
	var s Support
	var err error
	if s.MsgZeroCopy, err = try(unix.SOCK_STREAM, unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1); err != nil {
		return s, fmt.Errorf("SO_ZEROCOPY: %w", err)
	}
	if s.UDPGSO, err = try(unix.SOCK_DGRAM, unix.SOL_UDP, unix.UDP_SEGMENT, 1400); err != nil {
		return s, fmt.Errorf("UDP_SEGMENT: %w", err)
	}
	if s.UDPGRO, err = try(unix.SOCK_DGRAM, unix.SOL_UDP, unix.UDP_GRO, 1); err != nil {
		return s, fmt.Errorf("UDP_GRO: %w", err)
	}
	return s, nil
}
