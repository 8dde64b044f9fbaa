package engine

import (
	"errors"
	"fmt"
	"syscall"
)

// The data path options: other ways for the loops to hand payload to the
// kernel and take it back, and the socket settings that change how the
// kernel moves it. Each is off unless asked for; the Linux versions are
// in datapath_linux.go, zerocopy_linux.go and rxmode_linux.go, and other
// platforms refuse them with ErrUnsupported.
//
//   - TCPSender.UseSendfile: sendfile(2) from a memfd holding the payload
//     ring, so the kernel takes page references instead of copying.
//   - TCPSender.UseMsgZeroCopy: send(2) with MSG_ZEROCOPY; the kernel
//     tells when it is done with the pages through the socket's error
//     queue, which the loop reads and counts (Counters.ZeroCopyCompleted,
//     and ZeroCopyCopied for those it had to copy after all, as it does
//     for every delivery to a local socket: loopback, veth).
//   - TCPReceiver.UseSplice: splice(2) from the socket into a pipe and on
//     to /dev/null: the payload never reaches user space.
//   - TCPReceiver.UseDiscard: recv(2) with MSG_TRUNC, which on TCP makes
//     the kernel drop the bytes without copying them.
//   - SetPacingRate, SetBusyPoll: SO_MAX_PACING_RATE and SO_BUSY_POLL.
//   - UDPSender.SetGSO, UDPReceiver.EnableGRO: UDP_SEGMENT and UDP_GRO.
//   - Pin: a data-path thread bound to one CPU.

// Send and receive modes of the TCP loops.
type (
	sendMode uint8
	rxMode   uint8
)

const (
	sendCopy sendMode = iota
	sendFile
	sendMsgZeroCopy
)

const (
	rxCopy rxMode = iota
	rxSplice
	rxDiscard
)

// optError wraps the error of a socket option the kernel refused, so that
// "not supported here" reads as ErrUnsupported whatever the platform's
// errno (mdlayher/ethtool's convention).
type optError struct {
	what string
	err  error
}

func (e *optError) Error() string { return fmt.Sprintf("%s: %v", e.what, e.err) }
func (e *optError) Unwrap() error { return e.err }

func (e *optError) Is(target error) bool {
	return target == ErrUnsupported && notSupported(e.err)
}

// withFD runs fn on the descriptor of c, a *net.TCPConn or *net.UDPConn.
func withFD(c Socket, fn func(fd int) error) error {
	if c == nil {
		return fmt.Errorf("no data socket")
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// errNoPlatform is what the options return where they do not exist.
var errNoPlatform = fmt.Errorf("data path options: %w", ErrUnsupported)

// IsUnsupported reports whether err says the kernel or the platform lacks
// a feature (as opposed to refusing it for this socket or this user).
func IsUnsupported(err error) bool { return errors.Is(err, ErrUnsupported) }

// Socket is what socket options are set through: a connection, or a loop
// that owns its socket outside the connection (the request/response
// loops on Linux).
type Socket interface {
	SyscallConn() (syscall.RawConn, error)
}
