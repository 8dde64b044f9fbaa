package engine

import (
	"errors"
	"fmt"
	"syscall"
)

// The data path options: other ways for the loops to hand payload to the
// kernel and take it back, and the socket settings that change how the
// kernel moves it. Each is off unless asked for. The exported functions
// below call the Linux versions in datapath_linux.go, zerocopy_linux.go
// and rxmode_linux.go; engine_other.go refuses them with ErrUnsupported.
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
// "not supported here" reads as ErrUnsupported (and errors.ErrUnsupported)
// whatever the platform's errno (mdlayher/ethtool's convention).
type optError struct {
	what string
	err  error
}

func (e *optError) Error() string { return fmt.Sprintf("%s: %v", e.what, e.err) }
func (e *optError) Unwrap() error { return e.err }

func (e *optError) Is(target error) bool {
	return (target == ErrUnsupported || target == errors.ErrUnsupported) && notSupported(e.err)
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

// Socket is what socket options are set through: a connection, or a loop
// that owns its socket outside the connection (the request/response
// loops on Linux).
type Socket interface {
	SyscallConn() (syscall.RawConn, error)
}

// UseSendfile makes the sender hand its payload to the kernel with
// sendfile(2) from a memfd that holds the payload ring, instead of
// write(2) from memory: the kernel takes references to the file's pages
// rather than copying the bytes. The memfd is made when Run starts and
// closed when it returns. Call before Run.
func (s *TCPSender) UseSendfile() error { return s.useSendfile() }

// UseMsgZeroCopy makes the sender use send(2) with MSG_ZEROCOPY, after
// turning SO_ZEROCOPY on. The kernel then reports on the socket's error
// queue when it no longer needs the pages of each send, and whether it
// copied them after all; the loop reads those completions and counts them
// (Counters.ZeroCopyCompleted, ZeroCopyCopied). When the kernel refuses
// SO_ZEROCOPY the sender keeps copying and the error, which matches
// ErrUnsupported when the kernel lacks the feature, says why. Call before
// Run.
func (s *TCPSender) UseMsgZeroCopy() error { return s.useMsgZeroCopy() }

// UseSplice makes the receiver move the payload with splice(2) from the
// socket into a pipe and from the pipe to /dev/null, instead of read(2):
// the bytes are counted but never copied to user space. The pipe and
// /dev/null are opened when Run starts and closed when it returns. Call
// before Run.
func (r *TCPReceiver) UseSplice() error { return r.useSplice() }

// UseDiscard makes the receiver call recv(2) with MSG_TRUNC, with which a
// TCP socket drops the bytes it returns the count of, without copying
// them. Call before Run.
func (r *TCPReceiver) UseDiscard() error { return r.useDiscard() }

// SetPacingRate caps the rate at which the kernel sends on c to
// bytesPerSecond (SO_MAX_PACING_RATE) and returns the cap it reads back.
// The cap counts the packets' headers too. TCP paces to it by itself
// since Linux 4.20 (its internal pacing); other sockets are paced only by
// the fq qdisc.
func SetPacingRate(c Socket, bytesPerSecond uint64) (uint64, error) {
	return setPacingRate(c, bytesPerSecond)
}

// SetBusyPoll sets SO_BUSY_POLL on c: a blocking receive spins up to usec
// microseconds on the device queue before it sleeps. It returns what the
// kernel reads back. Raising it above net.core.busy_read needs
// CAP_NET_ADMIN.
func SetBusyPoll(c Socket, usec int) (int, error) { return setBusyPoll(c, usec) }

// SetBusyPoll makes the TCP_CRR server loops set SO_BUSY_POLL on every
// connection they accept, which do not inherit it from the listener. It
// sets it on the listener too, to learn what the kernel grants, and
// returns that. Call before the loops run.
func (sh *CRRShared) SetBusyPoll(usec int) (int, error) { return sh.setBusyPoll(usec) }

// ProbeBusyPoll sets SO_BUSY_POLL on a socket of its own and returns what
// the kernel grants: what the TCP_CRR client's per-transaction sockets get
// (Options.BusyPollMicros).
func ProbeBusyPoll(usec int) (int, error) { return probeBusyPoll(usec) }

// NAPIID returns the id of the device queue (NAPI context) c's last
// packets arrived from (SO_INCOMING_NAPI_ID): 0 when they came from none,
// as on loopback, where busy polling has nothing to poll.
func NAPIID(c Socket) (int, error) { return napiID(c) }

// SetGSO makes the kernel cut every send of the sender into datagrams of
// size bytes (UDP_SEGMENT): one sendmmsg entry carries several datagrams,
// each stamped with its own sequence number. The send size must be at
// least size, and its remainder after whole datagrams either 0 or a
// datagram of its own (spec.Test.Validate checks both). Call before Run.
func (s *UDPSender) SetGSO(size int) error { return s.setGSO(size) }

// EnableGRO turns UDP_GRO on: the kernel may hand the receiver several
// datagrams of one flow joined in one buffer, with their size in a
// control message; the loop cuts them apart again, so that every datagram
// is counted by its sequence number as without GRO. Call before Run.
func (r *UDPReceiver) EnableGRO() error { return r.enableGRO() }

// Support is what the kernel grants of the data path's socket options;
// elsewhere than Linux, none.
type Support struct {
	MsgZeroCopy bool // SO_ZEROCOPY on TCP
	UDPGSO      bool // UDP_SEGMENT
	UDPGRO      bool // UDP_GRO
}

// ProbeSupport tries each data path socket option on a socket of its own:
// a kernel built without a feature refuses it whatever its release.
// Elsewhere than Linux it finds none, without an error.
func ProbeSupport() (Support, error) { return probeSupport() }
