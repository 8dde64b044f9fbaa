//go:build !wirespeed_portable

package engine

import (
	"encoding/binary"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"wirespeed/internal/measure"
)

// ownFiles runs loop, a copying loop's blocking calls on descriptor fd, on
// an OS thread of its own whose file descriptor table is its own too
// (unshare(CLONE_FILES)), with the CPU affinity of the calling thread (so
// that -T pins it), and returns what loop returned.
//
// Why: in a process of more than one thread, the kernel looks up the
// descriptor of every send and receive under RCU and takes and drops a
// reference on its file around the call (fdget and fput: two atomic
// operations on the file's count), because another thread sharing the
// table could close it meanwhile; a thread whose table nothing else
// shares takes the single-threaded path, a plain lookup, as netperf's
// single-threaded process does. In a 64-byte TCP_MAERTS, fput and the
// part of fdget and of __sys_sendto/__sys_recvfrom above netperf's took
// 4% of the sender's CPU per message and 6% of the receiver's
// (bench/README.md, "A file table of the loop's own").
//
// The copy of the table holds a reference to every file open at the
// unshare. The sockets and pipes among them other than fd are closed in
// the copy at once, so that a connection or pipe the rest of the process
// closes while the loop runs is closed for its peer too (a control
// connection's end of stream, a child's output), not kept open until the
// loop ends; the Go runtime's epoll and eventfd descriptors (which this
// thread may use when its goroutine sleeps or wakes another), standard
// input, output and error (whatever they are) and regular files are kept. Whatever loop opens lives
// in the copy only, where nothing else can see it: loop must use fd and
// nothing else another thread owns or is given. When loop returns, the
// copy's sockets and pipes are closed, fd's among them (the owner closes
// its own), and the goroutine ends without unlocking its thread, which
// makes the Go runtime end the thread and the kernel drop the table (on
// the process's main thread, park it for good).
//
// Where unshare fails (a seccomp filter that forbids it), loop runs on
// the thread with the process's table, as it would have without this.
func ownFiles(fd int, loop func() error) error {
	var mask unix.CPUSet
	haveMask := unix.SchedGetaffinity(0, &mask) == nil
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if haveMask {
			unix.SchedSetaffinity(0, &mask)
		}
		if unix.Unshare(unix.CLONE_FILES) != nil {
			defer runtime.UnlockOSThread()
			done <- loop()
			return
		}
		closeSharedEnds(fd)
		err := loop()
		// The copy's sockets, fd and any loop made, closed now: on the
		// process's main thread the Go runtime parks the thread for good
		// rather than end it, and its table with it.
		closeSharedEnds(-1)
		done <- err
	}()
	return <-done
}

// closeSharedEnds closes, in the calling thread's own copy of the file
// table, every socket and pipe but keep and standard input, output and
// error (see ownFiles), which stay whatever they are: a pipe to a
// terminal's reader, or under systemd a socket to the journal, where what
// the loop's thread logs goes. It lists the
// table from /proc/thread-self/fd; without /proc it leaves the copy as it
// is, which only keeps other connections open until the loop ends. The
// entries are read by hand (linux_dirent64: inode, offset, record length,
// type, name) rather than with unix.ParseDirent, which allocates a string
// per descriptor: the loops' tests count their allocations.
func closeSharedEnds(keep int) {
	dir, err := unix.Open(threadFDs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(dir)
	var buf [4096]byte
	for {
		n, err := unix.Getdents(dir, buf[:])
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+direntName < n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+direntReclen:]))
			if reclen == 0 {
				return
			}
			fd, ok := atoiName(buf[off+direntName : min(off+reclen, n)])
			off += reclen
			if !ok || fd == keep || fd == dir || fd <= 2 {
				continue
			}
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil {
				continue
			}
			// Closing an entry already listed does not move the listing,
			// which goes by descriptor number.
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFSOCK, unix.S_IFIFO:
				unix.Close(fd)
			}
		}
	}
}

// Offsets in a linux_dirent64 record: d_ino (8 bytes), d_off (8), then
// d_reclen (2), d_type (1) and d_name.
const (
	direntReclen = 16
	direntName   = 19
)

// threadFDs lists the calling thread's descriptors.
var threadFDs = filepath.Join(measure.DefaultProcRoot, "thread-self", "fd")

// atoiName reads a NUL-terminated decimal descriptor number ("." and ".."
// are not numbers).
func atoiName(b []byte) (int, bool) {
	v, digits := 0, 0
	for _, c := range b {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || digits > 9 {
			return 0, false
		}
		v = v*10 + int(c-'0')
		digits++
	}
	return v, digits > 0
}
