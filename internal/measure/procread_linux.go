package measure

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// readSmall reads the file at path into buf with plain system calls: an
// open, reads until the end or buf is full, a close.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return n, nil
		}
		n += m
	}
	return n, nil
}
