package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Unsent returns how many bytes written on the TCP socket c the peer has
// not yet acknowledged (SIOCOUTQ): 0 once everything sent reached the
// peer's kernel. c may be a *net.TCPConn or an *os.File duplicate of one,
// which stays usable after the connection is closed.
func Unsent(c syscall.Conn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
		return 0, err
	}
	return n, ierr
}
